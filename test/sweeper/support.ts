import { purgeExpired } from '../../apps/sweeper/jobs/purge-expired.js'
import { refreshStats } from '../../apps/sweeper/jobs/refresh-stats.js'
import { signalPurger, statsWriter, type Queryable } from '../../libs/shared/db/index.js'
import { createLogger } from '../../libs/shared/log/index.js'
import type { Stack } from '../helpers/stack.js'

export interface Rows {
  count: number
  /** The newest row's age; rows are spread evenly over `spreadSeconds` before that. */
  createdSecondsAgo: number
  spreadSeconds?: number
  ttl: number
  /** Rows cycle through this many origins. */
  origins?: number
  type?: string
  pinned?: boolean
  removedSecondsAgo?: number
  refId?: string
}

/**
 * Inserts signals with one statement, taking their seqs from feed_head like the writer does, so
 * the feed invariant holds. Backdated rows stand in for time passing (no sleeping in tests).
 */
export async function insertSignals(db: Queryable, schema: string, r: Rows): Promise<void> {
  await db.query(
    `with h as (update "${schema}".feed_head set seq = seq + $1 returning seq),
     g as (select h.seq - $1 + i as seq, i, now() - ($2::float8 + $3::float8 * ($1 - i) / $1) * interval '1 second' as created_at
           from h, generate_series(1, $1::int) i)
     insert into "${schema}".signals (seq, id, origin, origin_uri, origin_verified, type, tags, payload, ref_id,
                                      ttl_seconds, created_at, expires_at, pinned, removed_at)
     select seq, 'r' || lpad(seq::text, 19, '0'), 'fp_' || lpad((i % $4)::text, 20, '0'), 'sw://test/identities/x', true,
            $5::text, '{}', '{"$type":"' || $5::text || '"}', $9::text, $6::int, created_at, created_at + $6::int * interval '1 second', $7::bool,
            case when $8::float8 is null then null else now() - $8::float8 * interval '1 second' end
     from g`,
    [
      r.count,
      r.createdSecondsAgo,
      r.spreadSeconds ?? 0,
      r.origins ?? 5,
      r.type ?? 'broadcast',
      r.ttl,
      r.pinned ?? false,
      r.removedSecondsAgo ?? null,
      r.refId ?? null,
    ],
  )
}

/** How many rows of each type remain. */
export async function countByType(db: Queryable, schema: string): Promise<Record<string, number>> {
  const { rows } = await db.query<{ type: string; n: number }>(`select type, count(*)::int as n from "${schema}".signals group by type`)
  return Object.fromEntries(rows.map((r) => [r.type, r.n]))
}

/** What GET /sw/stats should say, counted straight from the signals table. */
export async function directBuckets(db: Queryable, schema: string, bucketSeconds: number) {
  const { rows } = await db.query<{ at: Date; signals: number; identities: number }>(
    `select to_timestamp(floor(extract(epoch from created_at) / $1::int) * $1::int) as at, count(*)::int as signals,
            count(distinct origin)::int as identities
     from "${schema}".signals group by 1 order by 1`,
    [bucketSeconds],
  )
  return rows.map((r) => ({ at: r.at.toISOString(), signals: r.signals, identities: r.identities }))
}

const quiet = createLogger('sweeper', 'silent')

/** One sweep, as the jobs run it: the rollup catches up, then the purge runs to the end. */
export async function sweepOnce(s: Pick<Stack, 'infra' | 'cfg'>, o: { purgeBatch?: number; rollupBatch?: number } = {}) {
  const stats = await refreshStats(statsWriter(s.infra.primary, s.infra.schema), quiet, {
    batchSize: o.rollupBatch ?? 20_000,
    budgetMs: 60_000,
    pauseMs: 0,
  })
  const purge = await purgeExpired(signalPurger(s.infra.primary, s.infra.schema), quiet, {
    graceSeconds: s.cfg.sweep.graceSeconds,
    batchSize: o.purgeBatch ?? 100,
    budgetMs: 60_000,
    pauseMs: 0,
  })
  return { stats, purge }
}
