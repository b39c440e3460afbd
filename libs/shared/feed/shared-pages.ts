import { filterKey, type ReadQuery } from '../domain/index.js'
import type { FeedPage } from './page.js'
import type { Tail } from './tail.js'
import { tailPage } from './tail-pages.js'

/** Reads with the same key and cursor get the same page: limit and every filter field. Memoised per query object. */
const keys = new WeakMap<ReadQuery, string>()
export function keyOf(q: ReadQuery): string {
  let k = keys.get(q)
  if (k === undefined) keys.set(q, (k = `${q.limit}\u0000${filterKey(q)}`)) // every filter field, from the domain's table
  return k
}

/** At most this many pages are kept, and at most this many characters of signal JSON between them; past either, all go. */
const MAX_PAGES = 256
const MAX_CHARS = 8 * 1024 * 1024

/**
 * Pages after a cursor from the tail, shared by every read of the same query and cursor while the
 * tail stays as it is: a wake-up's page (one per group of waiters) and the first pages of followers
 * who poll again after the tail moved (they come back from the last wake-up at the cursor it woke
 * them at, and find the next signal in the tail). One page object, so one encoding (render.ts
 * pageBody) and one response's bytes (sharedResponse) serve them all, as a wake-up's always did.
 *
 * A page is the one `tailPage` computes now, never an older one: it is dropped when the tail changes
 * (a signal, a pin, an unpin, a removal, a trim: Tail.version), at the first expiry (or end of
 * grace) among the signals it spans (nothing else in it depends on the clock), and at the end of the second it was
 * made in (its serverNow, as a shared response's Date header). A query relative to now (`since`) is
 * never kept.
 */
export class SharedPages {
  /** By query key (keyOf), then cursor: no key string is made per read. */
  private readonly pages = new Map<string, Map<number, FeedPage>>()
  private count = 0
  private version = -1
  private second = -1
  /** The earliest time a kept page stops being what tailPage would answer. */
  private until = 0
  private chars = 0

  /** tailPage(tail, q, cursor, nowMs, graceMs), shared while nothing it depends on changed. */
  page(tail: Tail, q: ReadQuery, cursor: number, nowMs: number, graceMs: number): FeedPage | null {
    // at the head (most polls: they wait) or below the tail: nothing to share
    if (cursor >= tail.head || !tail.covers(cursor) || q.sinceMs !== null) return tailPage(tail, q, cursor, nowMs, graceMs)
    const second = Math.floor(nowMs / 1000)
    if (tail.version !== this.version || second !== this.second || nowMs >= this.until) this.clear(tail.version, second)
    const key = keyOf(q)
    let byCursor = this.pages.get(key)
    const hit = byCursor?.get(cursor)
    if (hit) return hit
    const page = tailPage(tail, q, cursor, nowMs, graceMs)
    if (!page?.signals.length) return page // an empty page costs little to make again, and is not encoded when the read waits
    let chars = 0
    for (const json of page.signals) chars += json.length
    if (chars > MAX_CHARS) return page
    if (this.count >= MAX_PAGES || this.chars + chars > MAX_CHARS) this.clear(this.version, this.second), (byCursor = undefined)
    if (!byCursor) this.pages.set(key, (byCursor = new Map()))
    byCursor.set(cursor, page)
    this.until = Math.min(this.until, changesAt(tail, cursor, page.nextCursor, nowMs, graceMs))
    this.chars += chars
    this.count++
    return page
  }

  private clear(version: number, second: number) {
    this.pages.clear()
    this.chars = 0
    this.count = 0
    this.version = version
    this.second = second
    this.until = (second + 1) * 1000
  }
}

/**
 * The first moment after `nowMs` when a signal in (from, to] may start or stop matching: an
 * unpinned signal's expiry (isActive) or the end of its grace (survivesGrace). Nothing else in a
 * tail page depends on the clock; a pin or unpin changes the tail.
 */
function changesAt(tail: Tail, from: number, to: number, nowMs: number, graceMs: number): number {
  const e = tail.entries
  let at = Infinity
  for (let i = tail.firstAfter(from); i < e.length && e[i]!.signal.seq <= to; i++) {
    const s = e[i]!.signal
    if (s.pinned) continue
    const t = s.expiresAtMs > nowMs ? s.expiresAtMs : s.expiresAtMs + graceMs
    if (t > nowMs && t < at) at = t
  }
  return at
}
