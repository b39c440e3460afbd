import { setTimeout as sleep } from 'node:timers/promises'
import type { StatsWriter } from '../../../libs/shared/db/index.js'
import type { Logger } from '../../../libs/shared/log/index.js'

export interface RefreshStatsOptions {
  /** Signals counted per transaction. */
  batchSize: number
  budgetMs: number
  pauseMs: number
  signal?: AbortSignal
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
  while (!o.signal?.aborted && Date.now() - t0 < o.budgetMs) {
    const step = await stats.rollUp(o.batchSize)
    if (!step) break // another sweeper is rolling up right now
    report.counted += step.counted
    if (step.caughtUp) {
      report.done = true
      break
    }
    await sleep(o.pauseMs)
  }
  if (report.done) report.pruned = await stats.prune()
  report.ms = Date.now() - t0
  log.debug(report, 'stats refreshed')
  return report
}
