import type { Db, Ident } from '../types.js'
import { idempotencyKeys } from './idempotency.js'
import { KEPT_PARTITION, PURGE_FLOOR_SECONDS } from './purge-guards.js'
import { signalPartitions } from './partitions.js'

export { KEPT_PARTITION, PURGE_FLOOR_SECONDS }

export type PurgeKind = 'expired' | 'removed'

/**
 * The sweeper's deletes, one short transaction per batch. Two purgers at once take different rows
 * (`skip locked`), so however many sweepers run, each row is deleted once and nobody waits.
 */
export function signalPurger(db: Db, s: Ident) {
  // @NOTE the row purge covers partitions from `floor` up (the open ones: dropping whole partitions
  // retires the closed ones, signals/partitions.ts) and the default partition (rows carried
  // forward). `seq >= floor` prunes the closed partitions from the plan, so their expired rows,
  // waiting for the drop, are never walked.
  const from = { all: `${s}.signals`, kept: `${s}.${KEPT_PARTITION}` } as const
  // @NOTE three guards on every purge, each load-bearing:
  // - past the grace: by-id reads already answer 404 there (signals/read.ts `kept`), so when the
  //   purge runs never changes what a reader sees;
  // - created more than 24 h ago: threadsInLastDay must still count the row;
  // - seq at or below the stats rollup's cursor: history is counted before the row goes.
  const guards = `
    and created_at < now() - ${PURGE_FLOOR_SECONDS} * interval '1 second'
    and seq <= (select last_seq from ${s}.stats_rollup)`
  const sql = (rel: string): Record<PurgeKind, string> => ({
    // pinned signals never expire; the partial index signals_expires_at_idx holds only unpinned ones
    expired: `
      with doomed as (
        select seq from ${rel}
        where seq >= $3 and not pinned and expires_at < now() - $1::int * interval '1 second' ${guards}
        order by expires_at limit $2
        for update skip locked
      )
      delete from ${rel} x using doomed d where x.seq = d.seq`,
    // moderation-removed signals are hidden everywhere already; pinned or not, they go after the grace
    removed: `
      with doomed as (
        select seq from ${rel}
        where seq >= $3 and removed_at < now() - $1::int * interval '1 second' ${guards}
        order by removed_at limit $2
        for update skip locked
      )
      delete from ${rel} x using doomed d where x.seq = d.seq`,
  })
  const all = sql(from.all)
  const kept = sql(from.kept)
  const keys = idempotencyKeys(db, s)
  const partitions = signalPartitions(db, s)
  return {
    partitions,
    /** Deletes up to `limit` Idempotency-Key rows older than their 24 h; returns how many went. */
    purgeKeysBatch: (limit: number): Promise<number> => keys.purgeBatch(limit),
    /**
     * Deletes up to `limit` rows of one kind with seq >= `floor` (0: the whole table), then from
     * the default partition; returns how many went.
     */
    async purgeBatch(kind: PurgeKind, graceSeconds: number, limit: number, floor = 0): Promise<number> {
      const n = (await db.query(all[kind], [graceSeconds, limit, floor])).rowCount
      if (n >= limit || floor === 0) return n
      return n + (await db.query(kept[kind], [graceSeconds, limit - n, 0])).rowCount
    },
  }
}
export type SignalPurger = ReturnType<typeof signalPurger>
