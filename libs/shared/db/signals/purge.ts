import type { Ident, Queryable } from '../types.js'
import { idempotencyKeys } from './idempotency.js'

/** Nothing younger than this is ever purged: the unverified thread limit counts the last 24 h (threadsInLastDay). */
export const PURGE_FLOOR_SECONDS = 86_400

export type PurgeKind = 'expired' | 'removed'

/**
 * The sweeper's deletes, one short transaction per batch. Two purgers at once take different rows
 * (`skip locked`), so however many sweepers run, each row is deleted once and nobody waits.
 */
export function signalPurger(db: Queryable, s: Ident) {
  // @NOTE three guards on every purge, each load-bearing:
  // - past the grace: by-id reads already answer 404 there (signals/read.ts `kept`), so when the
  //   purge runs never changes what a reader sees;
  // - created more than 24 h ago: threadsInLastDay must still count the row;
  // - seq at or below the stats rollup's cursor: history is counted before the row goes.
  const guards = `
    and created_at < now() - ${PURGE_FLOOR_SECONDS} * interval '1 second'
    and seq <= (select last_seq from ${s}.stats_rollup)`
  const sql: Record<PurgeKind, string> = {
    // pinned signals never expire; the partial index signals_expires_at_idx holds only unpinned ones
    expired: `
      with doomed as (
        select seq from ${s}.signals
        where not pinned and expires_at < now() - $1::int * interval '1 second' ${guards}
        order by expires_at limit $2
        for update skip locked
      )
      delete from ${s}.signals x using doomed d where x.seq = d.seq`,
    // moderation-removed signals are hidden everywhere already; pinned or not, they go after the grace
    removed: `
      with doomed as (
        select seq from ${s}.signals
        where removed_at < now() - $1::int * interval '1 second' ${guards}
        order by removed_at limit $2
        for update skip locked
      )
      delete from ${s}.signals x using doomed d where x.seq = d.seq`,
  }
  const keys = idempotencyKeys(db, s)
  return {
    /** Deletes up to `limit` Idempotency-Key rows older than their 24 h; returns how many went. */
    purgeKeysBatch: (limit: number): Promise<number> => keys.purgeBatch(limit),
    /** Deletes up to `limit` rows of one kind; returns how many went. */
    async purgeBatch(kind: PurgeKind, graceSeconds: number, limit: number): Promise<number> {
      return (await db.query(sql[kind], [graceSeconds, limit])).rowCount
    },
  }
}
export type SignalPurger = ReturnType<typeof signalPurger>
