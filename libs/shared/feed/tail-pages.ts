import { matchesFilter, type ReadQuery } from '../domain/index.js'
import { TEXT_SCAN_BUDGET, type Page } from '../db/index.js'
import type { FeedPage } from './page.js'
import { searchTextOf, type Tail, type TailEntry } from './tail.js'

// Pure page functions: what a read answers from the in-memory tail or from a database page. No I/O,
// no state of their own, so every path (first read, wake-up, deadline, shutdown) computes a page the
// same way.

type Query = Pick<ReadQuery, 'limit'> & Parameters<typeof matchesFilter>[1]

/** matchesFilter on a tail entry, with the search text the tail keeps for it. */
const matches = (e: TailEntry, q: Query, nowMs: number, graceMs: number) =>
  matchesFilter(e.signal, q, nowMs, graceMs, q.q === null ? undefined : searchTextOf(e))

/**
 * Matching signals after `cursor` from the tail, or null when the tail does not reach back to
 * `cursor`. Not full: the follower has considered everything up to the tail's head.
 */
export function tailPage(tail: Tail, q: Query, cursor: number, nowMs: number, graceMs: number): FeedPage | null {
  if (!tail.covers(cursor)) return null
  const e = tail.entries
  const signals: string[] = []
  let last = cursor
  for (let i = tail.firstAfter(cursor); i < e.length && signals.length < q.limit; i++)
    if (matches(e[i]!, q, nowMs, graceMs)) signals.push(e[i]!.json), (last = e[i]!.signal.seq)
  return { signals, nextCursor: signals.length === q.limit ? last : Math.max(cursor, tail.head) }
}

/**
 * The newest page (no cursor) from the tail, or null when the tail may not hold all of it. A search
 * (`q`) in a database looks at the newest TEXT_SCAN_BUDGET rows only: a tail that holds as many has
 * looked at all of those, and says `partial` as the database would.
 */
export function tailNewest(tail: Tail, q: Query, nowMs: number, graceMs: number): FeedPage | null {
  const e = tail.entries
  const signals = tailNewestMatches(tail, q, nowMs, graceMs)
  const short = signals.length < q.limit && tail.from !== 0
  if (short && !(q.q !== null && e.length >= TEXT_SCAN_BUDGET)) return null
  // a search that looked at the bound's worth of signals and may miss older ones says so, as the database's does
  return { signals: signals.reverse(), nextCursor: tail.head, ...(short && { partial: true }) }
}

/** The tail's newest `q.limit` matches with seq > `above`, newest first. */
export function tailNewestMatches(tail: Tail, q: Query, nowMs: number, graceMs: number, above = 0): string[] {
  const e = tail.entries
  const signals: string[] = []
  for (let i = e.length - 1; i >= 0 && e[i]!.signal.seq > above && signals.length < q.limit; i--)
    if (matches(e[i]!, q, nowMs, graceMs)) signals.push(e[i]!.json)
  return signals
}

/**
 * A database page as a feed page: PostgreSQL wrote each signal's JSON (db/signals/page-sql.ts). A
 * page the scan budget stopped short says so (`partial`): the follower reads on from `nextCursor`
 * at once rather than waiting there.
 */
export function databasePage(page: Page<string>): FeedPage {
  return { signals: page.signals, nextCursor: page.upTo, ...(page.partial && { partial: true }) }
}
