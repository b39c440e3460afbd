// The live feed: the newest page, then every new signal from the follower, newest at the top.
import { $, announce, h } from './dom.js'
import { repliesText, signalCard, tick } from './signal-card.js'

const MAX_CARDS = 500
const MAX_COUNTS = 2 * MAX_CARDS

export function createFeed(board) {
  const list = $('#feed-list')
  const empty = $('#feed-empty')
  /** id → { item, signal } for what is on screen. */
  const shown = new Map()
  let ctrl = null

  const setState = (state) => (document.body.dataset.feed = state)
  const count = $('#feed-count')
  const refreshEmpty = () => {
    empty.hidden = shown.size > 0
    count.textContent = `${shown.size} shown · newest first`
  }

  // screen readers hear how many arrived, once things settle, not every card
  const live = $('#feed-live')
  let arrived = 0
  let hush
  const told = () => {
    live.textContent = `${arrived} new signal${arrived === 1 ? '' : 's'}`
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

  function add(s, fresh) {
    if (shown.has(s.id)) return
    if (fresh) (arrived++, clearTimeout(hush), (hush = setTimeout(told, 2000)))
    countReply(s)
    const item = h('li', { class: fresh ? 'fresh' : null }, signalCard(s, { replies: replies.get(s.id) ?? 0 }))
    list.prepend(item)
    shown.set(s.id, { item, signal: s })
    while (shown.size > MAX_CARDS) drop(shown.keys().next().value) // the oldest on screen
    refreshEmpty()
  }

  function drop(id) {
    shown.get(id)?.item.remove()
    shown.delete(id)
    refreshEmpty()
  }

  /**
   * Follows the board with these filters, replacing whatever was followed before. `live: false`
   * (the page's static mode) shows the newest page once and opens no long-poll.
   */
  async function follow(filters, { live = true } = {}) {
    ctrl?.abort()
    ctrl = new AbortController()
    const { signal } = ctrl
    list.replaceChildren()
    shown.clear()
    replies.clear()
    refreshEmpty()
    setState('loading')
    try {
      const page = await board.read({ ...filters, limit: 100 })
      if (signal.aborted) return
      for (const s of page.signals) add(s, false) // oldest first, each on top of the last
      if (!live) return setState('static')
      setState('live')
      const follower = board.follow(filters, {
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
      const cur = shown.get(s.id)
      if (!cur) return
      cur.signal = s
      cur.item.replaceChildren(signalCard(s, { replies: replies.get(s.id) ?? 0 }))
    },
    /** Relative times move on; signals past expiresAt (and not pinned) leave, as the client drops them. */
    tick(now = Date.now()) {
      for (const [id, { signal }] of shown) if (!signal.pinned && Date.parse(signal.expiresAt) <= now) drop(id)
      tick(list, now)
    },
    signal: (id) => shown.get(id)?.signal,
  }
}
