// "Load older": the page of signals just before the oldest one shown. The protocol reads forward
// only (`cursor`: after a feed position; `since`: created after an instant), so this walks forward
// from a time window that ends at the oldest card, widening the window until it holds a page of
// older signals (or is the whole feed), and narrowing it when it holds more than a walk may read.

const PAGE = 100
const MAX_READS = 20 // per walk: 2,000 signals, or fewer when the board's scan bound stops a read short
const FIRST_SPAN = 60_000
const WIDEN = 8
const WHOLE_FEED = 30 * 86_400_000 // past this, the window is the whole feed (no `since`)
const MAX_WALKS = 12

/**
 * Walks the feed forward from `since` (all of it when undefined) until a signal created at or after
 * `before` (or one already shown). Returns the newest PAGE signals before that point, oldest first,
 * and whether the walk got there within MAX_READS (null when it did not).
 */
async function walk(board, filters, since, before, shown) {
  const ring = []
  let cursor = 0
  for (let reads = 0; reads < MAX_READS; reads++) {
    const page = await board.read({ ...filters, cursor, since, limit: PAGE })
    for (const s of page.signals) {
      if (Date.parse(s.createdAt) >= before || shown(s.id)) return ring
      ring.push(s)
      if (ring.length > PAGE) ring.shift()
    }
    // a short page that the scan bound did not cut is the end of the feed: nothing older is left
    if (page.signals.length < PAGE && !page.partial) return ring
    cursor = page.nextCursor
  }
  return null
}

/**
 * Up to PAGE signals created before `before` (ms), the newest of them, oldest first, with no gap
 * between them and it; `more` is false when the whole feed was read and nothing older remains.
 * `shown(id)` tells a signal the page already has.
 */
export async function readOlder(board, filters, before, shown) {
  // the oldest matching signal (the first after position 0): a window reaching past it is the whole feed
  const first = await board.read({ ...filters, cursor: 0, limit: 1 })
  const oldest = first.signals[0]
  if (!oldest && !first.partial) return { signals: [], more: false }
  const start = oldest ? Date.parse(oldest.createdAt) : -Infinity
  if (start >= before || (oldest && shown(oldest.id))) return { signals: [], more: false }
  let span = FIRST_SPAN
  let best = null // the last complete walk, fewer than PAGE
  for (let walks = 0; walks < MAX_WALKS; walks++) {
    const whole = span > WHOLE_FEED || before - span < start
    const got = await walk(board, filters, whole ? undefined : new Date(before - span).toISOString(), before, shown)
    if (got === null) {
      // too many to walk: what the narrower window found is adjacent, so show that; else narrow
      if (best?.length) return { signals: best, more: true }
      if (span <= 1) break
      span = Math.max(1, Math.floor(span / WIDEN))
      continue
    }
    if (got.length >= PAGE) return { signals: got, more: true }
    if (whole) return { signals: got, more: false }
    best = got
    span *= WIDEN
  }
  return { signals: best ?? [], more: true }
}
