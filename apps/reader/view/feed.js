// The live feed: the newest page, then every new signal from the follower, newest at the top.
// While the reader is scrolled down the feed, new signals wait behind an "N new" marker (waiting.js);
// "Load older" pages back past the first page (older.js).
import { $, announce, h } from './dom.js'
import { readOlder } from './older.js'
import { createParents } from './parents.js'
import { repliesText, signalCard, tick } from './signal-card.js'
import { createWaiting } from './waiting.js'

const PAGE = 100
const MAX_CARDS = 1000 // on the page, older ones loaded included; past it the oldest leave
const MAX_COUNTS = 2 * MAX_CARDS

const plural = (n, one, many) => `${n} ${n === 1 ? one : many}`

/** `onChange()` runs when what the page holds changes: a signal arrived, left, or older ones loaded. */
export function createFeed(board, { onChange = () => {} } = {}) {
  const list = $('#feed-list')
  const empty = $('#feed-empty')
  const count = $('#feed-count')
  const olderBtn = $('#feed-older')
  const olderNote = $('#feed-older-note')
  /** id → { item, signal } for what is on screen. */
  const shown = new Map()
  const waiting = createWaiting(list, { onShow: () => show() })
  /** id → signal, oldest first: arrived while the reader was scrolled away from the top. */
  const pending = waiting.pending
  let ctrl = null
  let filters = {}
  let hasOlder = false
  let loadingOlder = false
  const parents = createParents(board, { held: (id) => shown.get(id)?.signal ?? pending.get(id) })

  const setState = (state) => (document.body.dataset.feed = state)

  function refreshCounts() {
    empty.hidden = shown.size > 0 || pending.size > 0
    count.textContent = `${shown.size} shown${pending.size ? ` · ${pending.size} new` : ''} · newest first`
    waiting.redraw()
    const full = shown.size >= MAX_CARDS
    olderBtn.hidden = full || !hasOlder || shown.size === 0
    olderBtn.disabled = loadingOlder
    olderBtn.textContent = loadingOlder ? 'Loading older signals…' : 'Load older signals'
    olderNote.textContent =
      shown.size === 0
        ? ''
        : full
          ? `The page holds at most ${MAX_CARDS.toLocaleString('en')} signals: narrow the filters to see older ones.`
          : hasOlder
            ? `These are the newest ${shown.size}; older active signals may match.`
            : `No older active signals match: all ${shown.size} are here.`
  }

  // screen readers hear how many arrived, once things settle, not every card
  const live = $('#feed-live')
  let arrived = 0
  let hush
  const told = () => {
    live.textContent = `${plural(arrived, 'new signal', 'new signals')}${pending.size ? ', above: scroll to the top or press the new signals button' : ''}`
    arrived = 0
  }

  // Replies the page has seen, per signal id: those in the feed it loaded and followed since (a
  // filter that leaves replies out leaves them uncounted). Bounded: the oldest counts go first.
  const replies = new Map()
  function countReply(s) {
    if (!s.refId) return
    const n = (replies.get(s.refId) ?? 0) + 1
    replies.delete(s.refId)
    replies.set(s.refId, n)
    if (replies.size > MAX_COUNTS) replies.delete(replies.keys().next().value)
    const el = shown.get(s.refId)?.item.querySelector('[data-replies-of]')
    if (el) el.textContent = repliesText(n)
  }

  /** Puts `s` on the page: on top (newer than all shown) or at the bottom (older). */
  function place(s, where, fresh) {
    const item = h('li', { class: fresh ? 'fresh' : null, 'data-id': s.id }, signalCard(s, { replies: replies.get(s.id) ?? 0 }))
    if (where === 'top') list.prepend(item)
    else list.append(item)
    shown.set(s.id, { item, signal: s })
    parents.learn(s)
    parents.fill(item)
    while (shown.size > MAX_CARDS) drop(list.lastElementChild.dataset.id), (hasOlder = true) // the oldest on screen
  }

  function add(s, fresh) {
    if (shown.has(s.id) || pending.has(s.id)) return
    if (fresh) arrived++, clearTimeout(hush), (hush = setTimeout(told, 2000))
    countReply(s)
    if (fresh && waiting.away()) {
      pending.set(s.id, s)
      parents.learn(s)
      if (pending.size > MAX_CARDS) pending.delete(pending.keys().next().value)
    } else place(s, 'top', fresh)
    refreshCounts()
    onChange()
  }

  /** Puts what waited behind the marker on top. */
  function show() {
    for (const s of pending.values()) place(s, 'top', true)
    pending.clear()
    refreshCounts()
  }

  function drop(id) {
    pending.delete(id)
    shown.get(id)?.item.remove()
    shown.delete(id)
    refreshCounts()
    onChange()
  }

  async function loadOlder() {
    const last = list.lastElementChild && shown.get(list.lastElementChild.dataset.id)?.signal
    if (loadingOlder || !last || !ctrl) return
    const { signal } = ctrl
    loadingOlder = true
    refreshCounts()
    try {
      const got = await readOlder(board, filters, Date.parse(last.createdAt), (id) => shown.has(id) || pending.has(id))
      if (signal.aborted) return
      for (const s of got.signals.toReversed()) if (!shown.has(s.id)) countReply(s), place(s, 'bottom', false)
      hasOlder = got.more && shown.size < MAX_CARDS
      onChange()
    } catch (err) {
      if (!signal.aborted) announce(`Could not load older signals: ${err.message}`, 'error')
    } finally {
      loadingOlder = false
      refreshCounts()
    }
  }
  olderBtn.addEventListener('click', loadOlder)

  /**
   * Follows the board with these filters, replacing whatever was followed before. `live: false`
   * (the page's static mode) shows the newest page once and opens no long-poll.
   */
  async function follow(f, { live = true } = {}) {
    ctrl?.abort()
    ctrl = new AbortController()
    const { signal } = ctrl
    filters = f
    list.replaceChildren()
    shown.clear()
    pending.clear()
    replies.clear()
    hasOlder = false
    loadingOlder = false
    refreshCounts()
    onChange()
    setState('loading')
    try {
      const page = await board.read({ ...f, limit: PAGE })
      if (signal.aborted) return
      for (const s of page.signals) add(s, false) // oldest first, each on top of the last
      hasOlder = page.signals.length >= PAGE || page.partial === true
      refreshCounts()
      if (!live) return setState('static')
      setState('live')
      const follower = board.follow(f, {
        cursor: page.nextCursor,
        signal,
        onRetry: () => setState('reconnecting'), // the client waits (Retry-After or backoff), then polls again
        onCursor: () => setState('live'),
      })
      for await (const s of follower) {
        if (signal.aborted) break // the rest of a page that was in flight when the filters changed
        add(s, true)
      }
    } catch (err) {
      if (signal.aborted) return
      setState('error')
      announce(`The feed stopped: ${err.message}`, 'error')
    }
  }

  return {
    follow,
    drop,
    /** A changed signal (pinned, unpinned) redrawn in place. */
    update(s) {
      if (pending.has(s.id)) pending.set(s.id, s)
      const cur = shown.get(s.id)
      if (!cur) return
      cur.signal = s
      cur.item.replaceChildren(signalCard(s, { replies: replies.get(s.id) ?? 0 }))
      parents.fill(cur.item)
    },
    /** Relative times move on; signals past expiresAt (and not pinned) leave, as the client drops them. */
    tick(now = Date.now()) {
      const gone = (s) => !s.pinned && Date.parse(s.expiresAt) <= now
      for (const [id, { signal }] of shown) if (gone(signal)) drop(id)
      for (const [id, s] of pending) if (gone(s)) drop(id)
      tick(list, now)
    },
    signal: (id) => shown.get(id)?.signal,
    /** Every signal the page holds: on screen and waiting behind the marker. */
    *signals() {
      for (const { signal } of shown.values()) yield signal
      yield* pending.values()
    },
    /** Signals on screen and waiting; with no filter, together what the board's active count should match. */
    held: () => ({ shown: shown.size, waiting: pending.size }),
    filtered: () => Object.keys(filters).length > 0,
  }
}
