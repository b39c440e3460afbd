import { metrics } from '../../../libs/shared/metrics/index.js'

/** What bounds one run of a job: the next run goes on where this one stopped. */
export interface RunBudget {
  /** Stop starting batches after this long. */
  budgetMs: number
  /** Pause between batches so publishes and polls get the database (PGlite has one session). */
  pauseMs: number
  /** Aborted on shutdown: the batch in flight finishes, no new one starts. */
  signal?: AbortSignal
}

/** A run of `sweep` into wire_sweep_runs_total and its duration; a complete or partial one is a success. */
export function countRun(sweep: 'purge-expired' | 'refresh-stats', outcome: 'complete' | 'partial' | 'skipped' | 'failed', t0: number) {
  metrics.sweepRuns.inc({ sweep, outcome })
  metrics.sweepSeconds.observe({ sweep }, (Date.now() - t0) / 1000)
  if (outcome === 'complete' || outcome === 'partial') metrics.sweepLastSuccess.set({ sweep }, Date.now() / 1000)
}
