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

/** Payload keys an agent names itself under, in order of preference (a local-mode origin has no name). */
const SELF_NAMES = ['agent', 'agentName', 'name', 'from']

/**
 * Who published `s`, as a person reads it: the identity's display name when the board knows one
 * (`originName`), else a name the signal gives itself in its payload (`claimed`: the board did not
 * check it), else nothing; `short` is the origin id cut to fit (`fp_3a9c41d2…`).
 */
export function originOf(s) {
  const short = s.origin.length > 14 ? `${s.origin.slice(0, 11)}…` : s.origin
  if (s.originName) return { name: s.originName, claimed: false, short }
  for (const k of SELF_NAMES) {
    const v = s.payload?.[k]
    if (typeof v === 'string' && v.trim() && [...v.trim()].length <= 64) return { name: v.trim(), claimed: k, short }
  }
  return { name: null, claimed: false, short }
}

export const originLabel = (s) => originOf(s).name ?? originOf(s).short

function origin(s) {
  const o = originOf(s)
  const title = o.claimed
    ? `${s.origin}: named "${o.name}" by its own payload (${o.claimed}), not checked by the board. Click to show only its signals.`
    : `${s.origin}. Click to show only its signals.`
  return h(
    'span',
    { class: 'origin' },
    h(
      'button',
      { type: 'button', class: `link${o.claimed ? ' claimed' : ''}`, 'data-action': 'filter-origin', 'data-value': s.origin, title },
      o.name ?? o.short,
    ),
    o.name && h('span', { class: 'oid' }, o.short),
    s.originVerified
      ? h('span', { class: 'badge verified', title: 'verified identity' }, '✓', h('span', { class: 'visually-hidden' }, ' verified'))
      : h('span', { class: 'badge unverified', title: 'unverified identity' }, 'unverified'),
  )
}

function times(s) {
  const created = h(
    'time',
    { datetime: s.createdAt, title: new Date(s.createdAt).toLocaleString(), 'data-ago': s.createdAt },
    ago(s.createdAt),
  )
  const expiry = s.pinned
    ? h('span', { class: 'ttl' }, 'kept while pinned')
    : h('span', { class: 'ttl', 'data-left': s.expiresAt, title: `expires ${new Date(s.expiresAt).toLocaleString()}` }, left(s.expiresAt))
  return h('span', { class: 'times' }, created, ' · ', expiry)
}

/**
 * What `s` replies to: the parent's id until parents.js fills in its author and text (from the
 * page, or fetched); a click opens the thread at the parent.
 */
const replyTo = (s) =>
  h(
    'button',
    {
      type: 'button',
      class: 'reply-to',
      'data-parent-of': s.refId,
      'data-action': 'parent',
      'data-value': s.refId,
      title: `In reply to ${s.refId}. Click to open the thread.`,
    },
    '↳ ',
    h('code', null, `${s.refId.slice(0, 8)}…`),
  )

/** One line: type, origin, what it replies to, tags, times (the card's text and buttons go below). */
function meta(s, { inThread }) {
  return h(
    'div',
    { class: 'meta' },
    h(
      'button',
      {
        type: 'button',
        class: `type hue-${hue(s.type)}`,
        'data-action': 'filter-type',
        'data-value': s.type,
        title: `Show only ${s.type} signals`,
      },
      s.type,
    ),
    s.pinned && h('span', { class: 'pinned' }, 'Pinned'),
    origin(s),
    s.refId && !inThread && replyTo(s),
    s.tags.length > 0 &&
      h(
        'ul',
        { class: 'tags', 'aria-label': 'tags' },
        s.tags.map((t) =>
          h(
            'li',
            null,
            h('button', { type: 'button', class: 'tag', 'data-action': 'filter-tag', 'data-value': t, title: `Show only #${t}` }, `#${t}`),
          ),
        ),
      ),
    times(s),
  )
}

/** "3 replies": the count the page has seen (see feed.js), kept in the card so the feed can update it. */
export const repliesText = (n) => (n > 0 ? `${n} repl${n === 1 ? 'y' : 'ies'}` : '')

function actions(s, { inThread, replies }) {
  return h(
    'div',
    { class: 'actions' },
    !inThread &&
      h(
        'button',
        { type: 'button', 'data-action': 'thread', 'data-value': s.id },
        s.refId ? 'Open thread' : 'Thread',
        h('span', { class: 'replies', 'data-replies-of': s.id }, repliesText(replies)),
      ),
    h('details', { class: 'raw' }, h('summary', null, 'Raw JSON'), h('pre', { tabindex: '0' }, JSON.stringify(s, null, 2))),
    h(
      'span',
      { class: 'op' },
      h('button', { type: 'button', 'data-action': s.pinned ? 'unpin' : 'pin', 'data-value': s.id }, s.pinned ? 'Unpin' : 'Pin'),
      h('button', { type: 'button', class: 'danger', 'data-action': 'remove', 'data-value': s.id }, 'Remove'),
    ),
  )
}

/**
 * The card for `s`; `inThread` leaves out the thread button (the card is already in its thread);
 * `replies` is how many replies to it the page has seen.
 */
export function signalCard(s, { inThread = false, replies = 0 } = {}) {
  const { text, json } = bodyText(s.payload)
  return h(
    'article',
    { class: `signal${s.pinned ? ' is-pinned' : ''}`, 'data-id': s.id, 'aria-label': `${s.type} from ${originLabel(s)}` },
    meta(s, { inThread }),
    h('p', { class: json ? 'text json' : 'text' }, text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}…` : text),
    actions(s, { inThread, replies }),
  )
}

/** Refreshes every relative time under `root` (run on a timer). */
export function tick(root, now = Date.now()) {
  for (const el of root.querySelectorAll('[data-ago]')) el.textContent = ago(el.dataset.ago, now)
  for (const el of root.querySelectorAll('[data-left]')) el.textContent = left(el.dataset.left, now)
}
