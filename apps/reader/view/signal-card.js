// One signal as a card. Every string from the signal goes in as text (h() never parses markup).
import { h } from './dom.js'
import { ago, left } from './time.js'

const MAX_TEXT = 4000

/** A stable colour slot (0..7) per type, so a type looks the same everywhere. */
export function hue(type) {
  let n = 0
  for (const c of type) n = (n * 31 + c.codePointAt(0)) >>> 0
  return n % 8
}

/** What a person reads: payload.text when it is a string, else the payload's own keys as JSON. */
export function bodyText(payload) {
  if (typeof payload?.text === 'string') return { text: payload.text, json: false }
  const rest = Object.fromEntries(Object.entries(payload ?? {}).filter(([k]) => !k.startsWith('$')))
  return { text: Object.keys(rest).length ? JSON.stringify(rest, null, 2) : '', json: true }
}

export const originLabel = (s) => s.originName || (s.origin.length > 16 ? `${s.origin.slice(0, 14)}…` : s.origin)

function times(s) {
  const created = h('time', { datetime: s.createdAt, title: new Date(s.createdAt).toLocaleString(), 'data-ago': s.createdAt }, ago(s.createdAt))
  const expiry = s.pinned
    ? h('span', { class: 'ttl' }, 'kept while pinned')
    : h('span', { class: 'ttl', 'data-left': s.expiresAt, title: `expires ${new Date(s.expiresAt).toLocaleString()}` }, left(s.expiresAt))
  return h('span', { class: 'times' }, created, ' · ', expiry)
}

function meta(s) {
  return h(
    'div',
    { class: 'meta' },
    h('button', { type: 'button', class: `type hue-${hue(s.type)}`, 'data-action': 'filter-type', 'data-value': s.type, title: `Show only ${s.type} signals` }, s.type),
    s.pinned && h('span', { class: 'pinned' }, 'Pinned'),
    h(
      'span',
      { class: 'origin' },
      h('button', { type: 'button', class: 'link', 'data-action': 'filter-origin', 'data-value': s.origin, title: `Show only signals from ${s.origin}` }, originLabel(s)),
      s.originVerified
        ? h('span', { class: 'badge verified', title: 'verified identity' }, '✓', h('span', { class: 'visually-hidden' }, ' verified'))
        : h('span', { class: 'badge unverified', title: 'unverified identity' }, 'unverified'),
    ),
    times(s),
  )
}

function actions(s, { inThread }) {
  return h(
    'div',
    { class: 'actions' },
    !inThread && h('button', { type: 'button', 'data-action': 'thread', 'data-value': s.id }, s.refId ? 'Open thread' : 'Thread'),
    h('details', { class: 'raw' }, h('summary', null, 'Raw JSON'), h('pre', { tabindex: '0' }, JSON.stringify(s, null, 2))),
    h(
      'span',
      { class: 'op' },
      h('button', { type: 'button', 'data-action': s.pinned ? 'unpin' : 'pin', 'data-value': s.id }, s.pinned ? 'Unpin' : 'Pin'),
      h('button', { type: 'button', class: 'danger', 'data-action': 'remove', 'data-value': s.id }, 'Remove'),
    ),
  )
}

/** The card for `s`; `inThread` leaves out the thread button (the card is already in its thread). */
export function signalCard(s, { inThread = false } = {}) {
  const { text, json } = bodyText(s.payload)
  return h(
    'article',
    { class: `signal${s.pinned ? ' is-pinned' : ''}`, 'data-id': s.id, 'aria-label': `${s.type} from ${originLabel(s)}` },
    meta(s),
    s.refId && !inThread && h('p', { class: 'reply-to' }, '↳ reply to ', h('code', null, s.refId)),
    text && h('p', { class: json ? 'text json' : 'text' }, text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}…` : text),
    s.tags.length > 0 &&
      h('ul', { class: 'tags', 'aria-label': 'tags' }, s.tags.map((t) => h('li', null, h('button', { type: 'button', class: 'tag', 'data-action': 'filter-tag', 'data-value': t, title: `Show only #${t}` }, `#${t}`)))),
    actions(s, { inThread }),
  )
}

/** Refreshes every relative time under `root` (run on a timer). */
export function tick(root, now = Date.now()) {
  for (const el of root.querySelectorAll('[data-ago]')) el.textContent = ago(el.dataset.ago, now)
  for (const el of root.querySelectorAll('[data-left]')) el.textContent = left(el.dataset.left, now)
}
