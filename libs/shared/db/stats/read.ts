import type { Ident, Queryable } from '../types.js'

/** The most buckets one GET /sw/stats answer has. */
export const STATS_MAX_BUCKETS = 120

/** One bucket of GET /sw/stats: signals published in it and the distinct identities that published them. */
export interface ActivityBucket {
  at: string
  signals: number
  identities: number
}

/**
 * activeSignals and activeIdentities (GET /sw/wire, /sw/stats `current`), exact. Unpinned live rows
 * come from the covering index signals_active_idx alone and pinned ones from signals_pinned_idx, so
 * the cost follows the live rows, not the expired ones waiting for the purge.
 */
export const activeCountsSql = (s: Ident) => `
  select count(*)::int as active_signals, count(distinct a.origin)::int as active_identities from (
    select origin from ${s}.signals where not pinned and removed_at is null and expires_at > now()
    union all
    select origin from ${s}.signals where pinned and removed_at is null
  ) a`

/** The stats tables' read side; runs on a replica as well as the primary. */
export function statsReader(db: Queryable, s: Ident) {
  // @NOTE the rolled-up minutes plus the signals past the rollup's cursor, in one statement and so
  // one snapshot: the rollup moves rows into stats_buckets and the cursor in one transaction, so a
  // signal is counted exactly once here whether or not the sweeper has reached it (or purged it).
  // Bucket boundaries are whole minutes (bucketSeconds is a multiple of 60), so minute rows never straddle one.
  const bucketsSql = `
    with w as (
      select timestamptz 'epoch' + $1::int8 * interval '1 second' as lo,
             timestamptz 'epoch' + $2::int8 * interval '1 second' as hi
    ), r as (
      select b.at, b.origin, b.signals from ${s}.stats_buckets b, w where b.at >= w.lo and b.at < w.hi
      union all
      select x.created_at, x.origin, 1 from ${s}.signals x, w
      where x.seq > (select last_seq from ${s}.stats_rollup) and x.created_at >= w.lo and x.created_at < w.hi
    )
    select floor(extract(epoch from r.at) / $3::int)::int8 as n, sum(r.signals)::int as signals,
           count(distinct r.origin)::int as identities
    from r group by 1`

  return {
    /**
     * `count` buckets of `bucketSeconds` (a multiple of 60) aligned to the Unix epoch, oldest first,
     * ending with the one that holds `nowMs` (partial); buckets with no activity are zeros.
     */
    async activity(bucketSeconds: number, count: number, nowMs: number): Promise<ActivityBucket[]> {
      const last = Math.floor(nowMs / 1000 / bucketSeconds)
      const first = last - count + 1
      const { rows } = await db.query<{ n: string | number; signals: number; identities: number }>(bucketsSql, [
        first * bucketSeconds,
        (last + 1) * bucketSeconds,
        bucketSeconds,
      ])
      const byN = new Map(rows.map((r) => [Number(r.n), r]))
      return Array.from({ length: count }, (_, i) => {
        const r = byN.get(first + i)
        return { at: new Date((first + i) * bucketSeconds * 1000).toISOString(), signals: r?.signals ?? 0, identities: r?.identities ?? 0 }
      })
    },
  }
}
export type StatsReader = ReturnType<typeof statsReader>
