import { PgBoss } from 'pg-boss'
import type { Config } from '../../libs/shared/config/index.js'
import { bossConnection, bossSchemaName, createBossQueue, offerEverySlot, signalPurger, statsWriter } from '../../libs/shared/db/index.js'
import type { Infra } from '../../libs/shared/infra/index.js'
import type { Logger } from '../../libs/shared/log/index.js'
import { purgeExpired } from './jobs/purge-expired.js'
import { refreshStats } from './jobs/refresh-stats.js'

export const JOBS = { purge: 'wire.purge-expired', stats: 'wire.refresh-stats' } as const
type JobName = (typeof JOBS)[keyof typeof JOBS]

export interface SweeperOptions {
  /** Rows per purge transaction (default 500 on PostgreSQL, 200 on PGlite, where a batch holds the one session). */
  purgeBatchSize?: number
}

export interface Sweeper {
  /** Where pg-boss keeps its tables. */
  readonly bossSchema: string
  ready(): Promise<{ ok: boolean }>
  /** In-flight jobs finish their current batch and complete; then pg-boss stops and closes its own pool. */
  stop(): Promise<void>
}

/**
 * The sweeper role (docs/architecture.md "Sweeper"): pg-boss in a schema of its own runs the purge and
 * the stats rollup once per SIGNAL_SWEEP_INTERVAL_SECONDS, however many sweepers run. Runs in its
 * own process in the fleet and inside the single process (PostgreSQL or PGlite) otherwise.
 */
export async function createSweeper(cfg: Config, log: Logger, infra: Infra, opts: SweeperOptions = {}): Promise<Sweeper> {
  const slog = log.child({ mod: 'sweeper' })
  const { intervalSeconds, graceSeconds } = cfg.sweep
  const bossSchema = bossSchemaName(cfg.db.schema)
  const boss = new PgBoss({
    ...bossConnection(infra.primary, cfg.db.kind === 'postgres' ? cfg.db.url : undefined, cfg.links.db),
    schema: bossSchema,
    schedule: false, // no cron (one-minute granularity): every sweeper offers each slot's job itself
  })
  boss.on('error', (err) => slog.error({ err }, 'pg-boss error'))
  boss.on('warning', (w) => slog.warn({ warning: w.message }, 'pg-boss warning'))
  const stopping = new AbortController()
  try {
    await boss.start()
    const runs = jobRuns(cfg, infra, slog, opts)
    const workIds = new Map<JobName, string>()
    for (const name of Object.values(JOBS)) {
      await createBossQueue(boss, name)
      const handler = async (jobs: Array<{ signal: AbortSignal }>) => {
        try {
          return await runs[name](AbortSignal.any([stopping.signal, ...jobs.map((j) => j.signal)]))
        } catch (err) {
          slog.error({ err, job: name }, 'sweep job failed')
          throw err
        }
      }
      workIds.set(name, await boss.work(name, handler))
    }
    const expireInSeconds = Math.ceil(budgetMsFor(intervalSeconds) / 1000) * 2 + 60
    const offers = offerEverySlot(boss, workIds, { key: 'sweep', intervalSeconds, expireInSeconds }, stopping.signal, slog)
    slog.info({ bossSchema, intervalSeconds, graceSeconds }, 'sweeper started')
    let stopped: Promise<void> | undefined
    return {
      bossSchema,
      async ready() {
        if (stopping.signal.aborted) return { ok: false }
        await infra.primary.query('select 1')
        return { ok: true }
      },
      stop() {
        stopped ??= (async () => {
          stopping.abort()
          await offers.stop()
          await boss.stop({ graceful: true, timeout: 10_000 })
          slog.info('sweeper stopped')
        })()
        return stopped
      },
    }
  } catch (err) {
    await boss.stop({ graceful: false }).catch(() => {})
    throw err
  }
}

/** A run stops starting batches after this long; whatever is left waits for the next slot. */
const budgetMsFor = (intervalSeconds: number) => Math.min(120_000, Math.max(5_000, intervalSeconds * 1000))

/** What each job does when pg-boss hands it over; the signal aborts on shutdown (or a lost claim). */
function jobRuns(cfg: Config, infra: Infra, log: Logger, opts: SweeperOptions): Record<JobName, (signal: AbortSignal) => Promise<object>> {
  const budgetMs = budgetMsFor(cfg.sweep.intervalSeconds)
  const pauseMs = 10
  // measured with 100 000 expired rows (docs/sweeper.md): deletes don't block inserts on PostgreSQL,
  // but on PGlite every batch holds the one session, so its batches are smaller
  const purgeBatch = opts.purgeBatchSize ?? (infra.primary.kind === 'embedded' ? 200 : 500)
  const purger = signalPurger(infra.primary, infra.schema)
  const stats = statsWriter(infra.primary, infra.schema)
  const graceSeconds = cfg.sweep.graceSeconds
  return {
    [JOBS.purge]: (signal) => purgeExpired(purger, log, { graceSeconds, batchSize: purgeBatch, budgetMs, pauseMs, signal }),
    [JOBS.stats]: (signal) => refreshStats(stats, log, { batchSize: 20_000, budgetMs, pauseMs, signal }),
  }
}
