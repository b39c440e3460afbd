import type { Ident, Queryable } from '../types.js'
import { kept } from './retention.js'

/**
 * Signals a gap check examines at most: past this many numbers between a cursor and the page's,
 * the board is said to have dropped something (a possible gap, never a silent one). Only a cursor
 * older than the grace gets this far (keepsAll below), so this is the cost of a follower that was
 * away for a day, once per page it reads.
 */
export const GAP_SCAN_MAX = 20_000

/**
 * How far `created_at` may run behind `seq` order: the writer stamps a signal when it takes the
 * publish, before group commit numbers it, and writers' clocks differ a little. Generous: the
 * margin only decides when the cheap answer is enough.
 */
const SKEW_SECONDS = 300

/**
 * Whether the board still keeps every signal numbered after a follower's cursor: the retention
 * rule (retention.ts) is what a board keeps, so a signal it no longer keeps (purged, or past its
 * grace and about to be) is one a follower that was away that long may have missed. The events
 * binding answers `truncated: true` for it (apps/agents/mcp-events.ts).
 *
 * `seq` is dense (feed_head hands out blocks without gaps), so a number in the range with no row
 * is a purged signal; the one other hole, a failover's jump (docs/architecture.md "A promoted
 * standby"), is a possible gap too and said so.
 */
export function gapReader(db: Queryable, s: Ident, graceSeconds: number) {
  // @NOTE the cheap answer: every signal created within the grace is kept whatever its ttl (a ttl
  // is at least 10 s and expiry comes first) and nothing that young is purged, so when the newest
  // signal at or below the cursor is younger than the grace (less the skew), so is everything after
  // it. One primary-key probe; every follower that polls more often than once a grace ends here.
  const recentSql = `select created_at > now() - ($2::int - ${SKEW_SECONDS}) * interval '1 second' as recent
    from ${s}.signals where seq <= $1 order by seq desc limit 1`
  // @NOTE otherwise count the range, bounded, up to the head of this snapshot (a replica that has
  // not replayed the page's end yet must not count what it has not seen as gone)
  const countSql = `
    with h as (select least($2::bigint, seq) as top from ${s}.feed_head),
    x as materialized (select pinned, expires_at, removed_at from ${s}.signals
      where seq > $1 and seq <= (select top from h) order by seq limit ${GAP_SCAN_MAX})
    select (select top from h) as top, count(*)::int as stored, count(*) filter (where ${kept('', '$3::int')})::int as kept from x`

  return {
    /** Whether every signal numbered in (after, upTo] is still kept: false is a possible gap. */
    async keepsAll(after: number, upTo: number): Promise<boolean> {
      if (upTo <= after) return true
      const probe = await db.query<{ recent: boolean }>(recentSql, [after, graceSeconds])
      if (probe.rows[0]?.recent === true) return true
      const { rows } = await db.query<{ top: string; stored: number; kept: number }>(countSql, [after, upTo, graceSeconds])
      const span = Number(rows[0]?.top ?? upTo) - after
      if (span <= 0) return true
      return span <= GAP_SCAN_MAX && rows[0]!.stored === span && rows[0]!.kept === span
    },
  }
}
