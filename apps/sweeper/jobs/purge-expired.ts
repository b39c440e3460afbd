import { setTimeout as sleep } from 'node:timers/promises'
import type { PurgeKind, RetireReport, SignalPurger } from '../../../libs/shared/db/index.js'
import type { Logger } from '../../../libs/shared/log/index.js'
import { metrics } from '../../../libs/shared/metrics/index.js'
import { countRun, type RunBudget } from './run.js'

export interface PurgeOptions extends RunBudget {
  /** SIGNAL_SWEEP_GRACE_SECONDS */
  graceSeconds: number
  /** Rows per delete (one short transaction each). */
  batchSize: number
  /** Most rows a partition drop carries forward (CARRY_MAX_ROWS); bench/day.ts scales it with its partitions. */
  carryMax?: number
}

export interface PurgeReport {
  /** Whole partitions dropped (signals/partitions.ts), the disk they held and the rows carried out of them. */
  partitions: { made: number } & RetireReport
  expired: number
  removed: number
  /** Idempotency-Key rows past their 24 h. */
  keys: number
  batches: number
  ms: number
  /** False when the budget or a shutdown cut the run short. */
  done: boolean
}

/**
 * wire.purge-expired: makes the next partition of `signals` if the head nears the last one, drops
 * the closed partitions whose every row may go (carrying forward the few that must stay), then
 * deletes signals expired (unpinned) or removed more than the grace ago from the open partitions,
 * the closed ones held by too many pinned rows to carry, and the default one (removed ones also
 * from the closed ones waiting for their rows to expire: signals/partitions.ts), then Idempotency-Key rows
 * older than 24 h, in small batches, until none are left. The guards (grace, 24 h floor, rollup
 * cursor) live in the SQL.
 */
export async function purgeExpired(purger: SignalPurger, log: Logger, o: PurgeOptions): Promise<PurgeReport> {
  const t0 = Date.now()
  const report: PurgeReport = {
    partitions: { made: 0, dropped: 0, bytes: 0, carried: 0, held: [], waiting: [], detachMs: 0, dropMs: 0 },
    expired: 0,
    removed: 0,
    keys: 0,
    batches: 0,
    ms: 0,
    done: false,
  }
  const more = () => !o.signal?.aborted && Date.now() - t0 < o.budgetMs
  try {
    report.partitions.made = (await purger.partitions.ensure()).made.length
    const retired = await purger.partitions.retire(o.graceSeconds, o.carryMax)
    report.partitions = {
      ...retired,
      made: report.partitions.made,
      detachMs: Math.round(retired.detachMs),
      dropMs: Math.round(retired.dropMs),
    }
    metrics.purgedPartitions.inc(retired.dropped)
    const partitions = await purger.partitions.rowPurged(retired)
    for (const kind of ['expired', 'removed'] satisfies PurgeKind[]) {
      for (const partition of partitions[kind]) {
        for (;;) {
          if (!more()) return finish(log, report, t0)
          const n = await purger.purgeBatch(kind, o.graceSeconds, o.batchSize, partition)
          report[kind] += n
          report.batches++
          metrics.purgedSignals.inc({ kind }, n) // per batch: a run that fails later still counts what it deleted
          if (n < o.batchSize) break
          await sleep(o.pauseMs)
        }
      }
    }
    for (;;) {
      if (!more()) return finish(log, report, t0)
      const n = await purger.purgeKeysBatch(o.batchSize)
      report.keys += n
      report.batches++
      if (n < o.batchSize) break
      await sleep(o.pauseMs)
    }
  } catch (err) {
    countRun('purge-expired', 'failed', t0)
    throw err
  }
  report.done = true
  return finish(log, report, t0)
}

function finish(log: Logger, r: PurgeReport, t0: number): PurgeReport {
  countRun('purge-expired', r.done ? 'complete' : 'partial', t0)
  r.ms = Date.now() - t0
  if (r.expired || r.removed || r.keys || r.partitions.made || r.partitions.dropped || !r.done) log.info(r, 'purged expired signals')
  else log.debug(r, 'nothing to purge')
  return r
}
