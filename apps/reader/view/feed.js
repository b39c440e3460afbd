// The live feed: the newest page, then every new signal from the follower, newest at the top.
import { $, announce, h } from './dom.js'
import { signalCard, tick } from './signal-card.js'

const MAX_CARDS = 500

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

  function add(s, fresh) {
    if (shown.has(s.id)) return
    if (fresh) (arrived++, clearTimeout(hush), (hush = setTimeout(told, 2000)))
    const item = h('li', { class: fresh ? 'fresh' : null }, signalCard(s))
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

  /** Follows the board with these filters, replacing whatever was followed before. */
  async function follow(filters) {
    ctrl?.abort()
    ctrl = new AbortController()
    const { signal } = ctrl
    list.replaceChildren()
    shown.clear()
    refreshEmpty()
    setState('loading')
    try {
      const page = await board.read({ ...filters, limit: 100 })
      if (signal.aborted) return
      for (const s of page.signals) add(s, false) // oldest first, each on top of the last
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
      cur.item.replaceChildren(signalCard(s))
    },
    /** Relative times move on; signals past expiresAt (and not pinned) leave, as the client drops them. */
    tick(now = Date.now()) {
      for (const [id, { signal }] of shown) if (!signal.pinned && Date.parse(signal.expiresAt) <= now) drop(id)
      tick(list, now)
    },
    signal: (id) => shown.get(id)?.signal,
  }
}
