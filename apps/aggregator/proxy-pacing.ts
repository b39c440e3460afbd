import { Transform } from 'node:stream'
import type { Clock } from '../../libs/shared/clock.js'

/**
 * A board over its budget streams again once its bucket holds this many seconds of the rate, and
 * then at full speed until it is below zero again: a pause every quarter second, not one per
 * chunk (each pause has undici set aside the socket's unread bytes and copy them back on resume;
 * paused chunk by chunk, 16 answers pumped at 16 MiB/s cost the aggregator twice the CPU).
 */
export const RESUME_SECONDS = 0.25

/** What `paced` needs of a budget. */
export interface Pacing {
  clock: Clock
  /** Bytes charged, ms answers spent waiting, answers that waited, requests refused: read by /metrics. */
  counts: { bytes: number; waitedMs: number; waited: number; refused: number }
  /** Takes `bytes` read from `board` out of its bucket (below zero if need be). */
  take(board: string, bytes: number): void
  /**
   * Calls `go` once the chunks that queued for `board` before have gone and its bucket is at zero
   * or above: at once when none waits and it is; after a wait, once it holds RESUME_SECONDS of the
   * rate. Returns what takes `go` out of the queue.
   */
  queue(board: string, go: () => void): () => void
}

/** The chunks waiting for one board's bucket, in the order they came, and the one timer that serves them. */
interface Queue {
  waiting: Set<() => void>
  timer: NodeJS.Timeout | undefined
}

/** What the queues read of the buckets: ms until a board's holds `floor` bytes, and until it is back at zero. */
interface Levels {
  until(board: string, floor: number): number
  waitMs(board: string): number
}

/** The queues of chunks waiting for their boards' buckets (Pacing's `queue`); `resume`: RESUME_SECONDS of the rate, in bytes. */
export function boardQueues({ until, waitMs }: Levels, resume: number): Pacing['queue'] {
  // @NOTE one queue and one timer per board, not a timer per waiting answer: answers that each
  // slept until the bucket should be back at zero all woke together, one passed and the rest
  // slept again, some thousands of wake-ups a second for 16 answers of one board
  const queues = new Map<string, Queue>()
  const serve = (board: string, q: Queue) => {
    q.timer = undefined
    for (const go of until(board, resume) > 0 ? [] : q.waiting) {
      if (waitMs(board) > 0) break
      q.waiting.delete(go)
      go() // takes its chunk from the bucket; a chunk queued meanwhile comes last in this same pass
    }
    clearTimeout(q.timer) // one a chunk queued during this pass may have set
    if (q.waiting.size > 0) q.timer = setTimeout(() => serve(board, q), until(board, resume) || 1)
    else if (queues.get(board) === q) queues.delete(board)
  }
  const queue = (board: string, go: () => void): (() => void) => {
    let q = queues.get(board)
    if (!q && waitMs(board) === 0) {
      go()
      return () => {}
    }
    if (!q) queues.set(board, (q = { waiting: new Set(), timer: undefined }))
    const mine = q
    mine.waiting.add(go)
    mine.timer ??= setTimeout(() => serve(board, mine), until(board, resume) || 1)
    return () => {
      if (!mine.waiting.delete(go) || mine.waiting.size > 0) return
      clearTimeout(mine.timer)
      if (queues.get(board) === mine) queues.delete(board)
    }
  }
  return queue
}

/**
 * A pass-through that charges `board`'s bucket for every chunk of its answer. While the bucket is
 * below zero (or other chunks of the board wait before it) the chunk waits in the board's queue,
 * unpassed, so the stream before it stops being read (its backpressure reaches the board's socket)
 * and nothing more is buffered. `signal` (the exchange's deadline, the client gone) ends a wait: a
 * throttled answer still ends at its deadline.
 */
export function paced(budget: Pacing, board: string, signal: AbortSignal): Transform {
  let cancel: (() => void) | undefined
  let since: number | null = null // when the current wait began (the budget's clock)
  let waited = false
  const waitEnds = () => {
    if (since === null) return
    budget.counts.waitedMs += budget.clock.now() - since
    since = null
  }
  const stop = () => out.destroy(signal.reason instanceof Error ? signal.reason : new Error('aborted'))
  const out = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      let queued = true
      const go = () => {
        queued = false
        cancel = undefined
        waitEnds()
        budget.take(board, chunk.length)
        cb(null, chunk)
      }
      const leave = budget.queue(board, go)
      if (!queued) return
      cancel = leave
      since = budget.clock.now()
      if (!waited) {
        waited = true
        budget.counts.waited++
      }
    },
    destroy(err, cb) {
      cancel?.()
      waitEnds()
      signal.removeEventListener('abort', stop)
      cb(err)
    },
  })
  if (signal.aborted) stop()
  else signal.addEventListener('abort', stop, { once: true })
  return out
}
