import { setTimeout as sleep } from 'node:timers/promises'
import type { StatsWriter } from '../../../libs/shared/db/index.js'
import type { Logger } from '../../../libs/shared/log/index.js'
import { metrics } from '../../../libs/shared/metrics/index.js'
import { countRun, type RunBudget } from './run.js'

export interface RefreshStatsOptions extends RunBudget {
  /** Signals counted per transaction. */
  batchSize: number
}

export interface RefreshStatsReport {
  counted: number
  pruned: number
  ms: number
  /** False when another sweeper held the cursor, or the budget or a shutdown cut the run short. */
  done: boolean
}

/**
 * wire.refresh-stats: counts the signals published since the last run into stats_buckets (so
 * GET /sw/stats is a cheap read and history outlives the rows), then drops history older than
 * any stats request can reach.
 */
export async function refreshStats(stats: StatsWriter, log: Logger, o: RefreshStatsOptions): Promise<RefreshStatsReport> {
  const t0 = Date.now()
  const report: RefreshStatsReport = { counted: 0, pruned: 0, ms: 0, done: false }
  let busy = false
  try {
    while (!o.signal?.aborted && Date.now() - t0 < o.budgetMs) {
      const step = await stats.rollUp(o.batchSize)
      if (!step) {
        busy = true // another sweeper is rolling up right now
        break
      }
      report.counted += step.counted
      metrics.rolledUpSignals.inc(step.counted)
      if (step.caughtUp) {
        report.done = true
        break
      }
      await sleep(o.pauseMs)
    }
    if (report.done) report.pruned = await stats.prune()
  } catch (err) {
    countRun('refresh-stats', 'failed', t0)
    throw err
  }
  countRun('refresh-stats', report.done ? 'complete' : busy && !report.counted ? 'skipped' : 'partial', t0)
  report.ms = Date.now() - t0
  log.debug(report, 'stats refreshed')
  return report
}
