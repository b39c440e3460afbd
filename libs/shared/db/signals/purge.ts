import type { Db, Ident } from '../types.js'
import { idempotencyKeys } from './idempotency.js'
import { PURGE_FLOOR_SECONDS, purgeable } from './retention.js'
import { signalPartitions } from './partitions.js'

export type PurgeKind = 'expired' | 'removed'

/**
 * The sweeper's deletes, one short transaction per batch. Two purgers at once take different rows
 * (`skip locked`), so however many sweepers run, each row is deleted once and nobody waits.
 */
export function signalPurger(db: Db, s: Ident) {
  const partitions = signalPartitions(db, s)
  // @NOTE the sweeper runs the row purge on one partition at a time: the open ones, the closed ones
  // held by more pinned rows than a drop carries forward, and the default one (signals/partitions.ts
  // `rowPurged`); dropping whole partitions retires the other closed ones, so their expired rows,
  // waiting for the drop, are never walked (their removed ones are). Named, not pruned by a seq
  // predicate: `seq >= n` would offer the planner the primary key instead of the expiry index.
  // @NOTE three guards on every purge, each load-bearing:
  // - past the grace: by-id reads already answer 404 there (signals/read.ts `kept`), so when the
  //   purge runs never changes what a reader sees;
  // - created more than 24 h ago: threadsInLastDay must still count the row;
  // - seq at or below the stats rollup's cursor: history is counted before the row goes.
  const guards = `
    and created_at < now() - ${PURGE_FLOOR_SECONDS} * interval '1 second'
    and seq <= (select last_seq from ${s}.stats_rollup)`
  // a signal's tag rows (migrations/0008) go in the same statement as the signal
  const deleteWithTags = (rel: string) => `,
      gone as (delete from ${rel} x using doomed d where x.seq = d.seq returning x.seq, x.tags),
      t as (delete from ${s}.signal_tags g using (select u.tag, gone.seq from gone cross join unnest(gone.tags) u(tag)) d
            where g.tag = d.tag and g.seq = d.seq)
      select count(*)::int as n from gone`
  // pinned signals never expire (the partial index signals_expires_at_idx holds only unpinned ones);
  // moderation-removed signals are hidden everywhere already: pinned or not, they go after the grace
  const purge = (rel: string, kind: PurgeKind) => `
      with doomed as (
        select seq from ${rel}
        where ${purgeable[kind]('$1::int')} ${guards}
        order by ${kind === 'expired' ? 'expires_at' : 'removed_at'} limit $2
        for update skip locked
      )
      ${deleteWithTags(rel)}`
  const sql = (rel: string): Record<PurgeKind, string> => ({ expired: purge(rel, 'expired'), removed: purge(rel, 'removed') })
  const statements = new Map<string, Record<PurgeKind, string>>()
  const on = (partition: string | null) => {
    const rel = partition === null ? `${s}.signals` : partitions.relation(partition)
    let x = statements.get(rel)
    if (!x) statements.set(rel, (x = sql(rel)))
    return x
  }
  const keys = idempotencyKeys(db, s)
  return {
    partitions,
    /** Deletes up to `limit` Idempotency-Key rows older than their 24 h; returns how many went. */
    purgeKeysBatch: (limit: number): Promise<number> => keys.purgeBatch(limit),
    /** Deletes up to `limit` rows of one kind from one partition (null: the whole table); returns how many went. */
    async purgeBatch(kind: PurgeKind, graceSeconds: number, limit: number, partition: string | null = null): Promise<number> {
      return (await db.query<{ n: number }>(on(partition)[kind], [graceSeconds, limit])).rows[0]?.n ?? 0
    },
  }
}
export type SignalPurger = ReturnType<typeof signalPurger>
