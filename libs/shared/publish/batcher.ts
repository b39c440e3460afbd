import { DatabaseUnavailable, isDataError, type NewSignal, type SignalWriter } from '../db/index.js'
import { WireError, type Signal } from '../domain/index.js'
import type { Logger } from '../log/index.js'
import { metrics } from '../metrics/index.js'

interface Pending {
  signal: NewSignal
  /** The publish's Idempotency-Key, stored with the signal; null: none. */
  key: string | null
  /** The signal with its seq; null when its key was already held and nothing was stored. */
  resolve: (s: Signal | null) => void
  reject: (e: unknown) => void
}

export interface BatcherOptions {
  maxBatch?: number
  /** Called after every committed batch with the new head (the wake-up). */
  onCommit: (head: number, batch: Signal[]) => void
}

/**
 * Group commit (docs/architecture.md): publishes that arrive while a batch is committing wait and go
 * together in the next one, so a busy writer makes one commit per batch, not per signal. One batcher
 * per process; the feed_head row lock orders the batches of every writer process.
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
        commit(batch, await insert(batch))
      } catch (err) {
        // a row the database refuses (a data or integrity error) fails the whole statement and
        // nothing was stored: each member is tried alone, so only the bad one fails
        if (batch.length > 1 && isDataError(err)) {
          log.warn({ err, size: batch.length }, 'signal batch refused: retrying its signals one by one')
          for (const p of batch) await insertAlone(p)
        } else fail(batch, err)
      }
    }
  }

  /** A batch with keys stores them with their signals (one statement still); one without, as it always did. */
  const insert = (batch: Pending[]): Promise<Array<Signal | null>> =>
    batch.some((p) => p.key !== null)
      ? writer.insertKeyedBatch(
          batch.map((p) => p.signal),
          batch.map((p) => p.key),
        )
      : writer.insertBatch(batch.map((p) => p.signal))

  function commit(batch: Pending[], saved: Array<Signal | null>) {
    const stored = saved.includes(null) ? saved.filter((s) => s !== null) : (saved as Signal[])
    saved.forEach((s, i) => void batch[i]!.resolve(s))
    if (stored.length === 0) return // every key was held: the head moved past seqs no signal has
    metrics.batchSize.observe(stored.length)
    opts.onCommit(stored[stored.length - 1]!.seq, stored)
  }

  async function insertAlone(p: Pending) {
    try {
      commit([p], await insert([p]))
    } catch (err) {
      fail([p], err)
    }
  }

  function fail(batch: Pending[], err: unknown) {
    const e = publishFailure(err)
    if (e.code === 'unavailable') log.error({ err, size: batch.length }, 'signal batch not committed')
    else log.warn({ err: { code: (err as { code?: unknown }).code }, size: batch.length }, 'signal refused by the database')
    for (const p of batch) p.reject(e)
  }

  function enqueue(signal: NewSignal, key: string | null) {
    return new Promise<Signal | null>((resolve, reject) => {
      queue.push({ signal, key, resolve, reject })
      // setImmediate gathers every publish that arrives in this turn of the event loop
      running ??= new Promise<void>((r) => setImmediate(r)).then(drain).finally(() => (running = null))
    })
  }

  return {
    /** Publishes waiting for the next batch (the one committing not included). */
    get queued() {
      return queue.length
    },
    /** Resolves once the signal is committed (acknowledged); rejects with 503 unavailable if it was not. */
    submit(signal: NewSignal): Promise<Signal> {
      return enqueue(signal, null) as Promise<Signal>
    },
    /**
     * As submit, with the publish's Idempotency-Key stored in the same transaction as its signal;
     * resolves null (nothing stored) when the key was already held: the caller answers through it.
     */
    submitKeyed(signal: NewSignal, key: string): Promise<Signal | null> {
      return enqueue(signal, key)
    },
    /**
     * An unverified identity's thread: counted and inserted in one transaction of its own (rare,
     * so outside the group commit); rejects with unverified_limited at the limit.
     */
    async submitLimitedThread(signal: NewSignal, limit: number): Promise<Signal> {
      let saved: Signal | null
      try {
        saved = await writer.insertLimitedThread(signal, limit)
      } catch (err) {
        log.error({ err }, 'thread not committed')
        throw publishFailure(err)
      }
      if (!saved) throw new WireError('unverified_limited', `unverified identities may open ${limit} thread(s) per 24 h`, { limit })
      metrics.batchSize.observe(1)
      opts.onCommit(saved.seq, [saved])
      return saved
    },
    /** Resolves when everything submitted so far is committed or failed (shutdown). */
    async flush() {
      while (running) await running
    },
  }
}
export type Batcher = ReturnType<typeof createBatcher>

/** What a publisher is told when its signal was not committed: whose fault, and whether it may have been stored after all. */
function publishFailure(err: unknown): WireError {
  // the envelope was valid, so a row the database refuses is the board's fault (a constraint the
  // envelope does not know, a restored row in the way), not the publisher's: 500, not 400
  if (isDataError(err))
    return new WireError('internal', 'the database refused this signal; nothing was stored', { outcome: 'not_stored' }, { cause: err })
  if (err instanceof DatabaseUnavailable && err.outcomeUnknown)
    return new WireError(
      'unavailable',
      'the database connection was lost while storing: outcome unknown, the signal may have been stored (retry with the same Idempotency-Key)',
      { outcome: 'unknown' },
      { retryAfter: 1 },
    )
  return nothingStored(err)
}

export const nothingStored = (cause: unknown) =>
  new WireError('unavailable', 'the database is unavailable; nothing was stored', { outcome: 'not_stored' }, { retryAfter: 1, cause })
