import type { NewSignal, SignalWriter } from '../db/index.js'
import { WireError, type Signal } from '../domain/index.js'
import type { Logger } from '../log/index.js'
import { metrics } from '../metrics/index.js'

interface Pending {
  signal: NewSignal
  resolve: (s: Signal) => void
  reject: (e: unknown) => void
}

export interface BatcherOptions {
  maxBatch?: number
  /** Called after every committed batch with the new head (the wake-up). */
  onCommit: (head: number, batch: Signal[]) => void
}

/**
 * Group commit (ARCHITECTURE.md): publishes that arrive while a batch is committing wait and go
 * together in the next one, so a busy writer makes one commit per batch, not per signal. One lane
 * per process; the feed_head row lock orders lanes across writer processes.
 */
export function createBatcher(writer: SignalWriter, log: Logger, opts: BatcherOptions) {
  const maxBatch = opts.maxBatch ?? 500
  let queue: Pending[] = []
  let running: Promise<void> | null = null

  async function drain() {
    while (queue.length) {
      const batch = queue.slice(0, maxBatch)
      queue = queue.slice(batch.length)
      try {
        const saved = await writer.insertBatch(batch.map((p) => p.signal))
        metrics.batchSize.observe(saved.length)
        saved.forEach((s, i) => batch[i]!.resolve(s))
        opts.onCommit(saved[saved.length - 1]!.seq, saved)
      } catch (err) {
        log.error({ err, size: batch.length }, 'signal batch not committed')
        const e = new WireError('unavailable', 'the database is unavailable; nothing was stored', undefined, { retryAfter: 1 })
        for (const p of batch) p.reject(e)
      }
    }
  }

  return {
    /** Resolves once the signal is committed (acknowledged); rejects with 503 unavailable if it was not. */
    submit(signal: NewSignal): Promise<Signal> {
      return new Promise<Signal>((resolve, reject) => {
        queue.push({ signal, resolve, reject })
        // setImmediate gathers every publish that arrives in this turn of the event loop
        running ??= new Promise<void>((r) => setImmediate(r)).then(drain).finally(() => (running = null))
      })
    },
    /** Resolves when everything submitted so far is committed or failed (shutdown). */
    async flush() {
      while (running) await running
    },
  }
}
export type Batcher = ReturnType<typeof createBatcher>
