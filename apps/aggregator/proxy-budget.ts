import { pipeline, type Readable, Transform } from 'node:stream'
import { systemClock, type Clock } from '../../libs/shared/clock.js'
import { WireError } from '../../libs/shared/domain/index.js'

/** A full bucket holds this many seconds of its rate: what a board that was quiet may stream at once. */
export const BURST_SECONDS = 4
/**
 * A new bucket (a board's first answer since the process started, or since its bucket went) holds
 * this many: a registrant who keeps registering fresh boards gets one second of the rate from
 * each, not the whole burst.
 */
export const START_SECONDS = 1
/**
 * A board over its budget streams again once its bucket holds this many seconds of the rate, and
 * then at full speed until it is below zero again: a pause every quarter second, not one per
 * chunk (each pause has undici set aside the socket's unread bytes and copy them back on resume;
 * paused chunk by chunk, 16 answers pumped at 16 MiB/s cost the aggregator twice the CPU).
 */
export const RESUME_SECONDS = 0.25

export interface BoardBudgetOptions {
  /** Bytes a second each board's proxied answers may stream through this process (0: off). */
  bytesPerSecond: number
  /** Buckets kept at once (AGGREGATOR_MAX_BOARDS): past it, the one charged longest ago goes. */
  maxBoards: number
  clock?: Clock
}

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

interface Bucket {
  /** Bytes it may stream now; below zero, what it streamed past its budget (paid back at the rate). */
  tokens: number
  /** When `tokens` was last brought up to date (the clock's ms). */
  at: number
}

/**
 * A token bucket per board for the bytes the proxy reads from it: `bytesPerSecond` refills it, it
 * holds at most BURST_SECONDS of that, and each chunk read is taken from it. A bucket below zero is
 * a board over its budget: its answers wait before their next chunk, and new requests to it are
 * refused, until the rate has paid the excess back. A bucket is made when a board is first charged,
 * holding START_SECONDS of the rate, so only registered boards the proxy reaches hold one, at most
 * `maxBoards`; a board removed or blocked drops its own.
 */
export function boardBudget(o: BoardBudgetOptions) {
  const rate = o.bytesPerSecond
  const burst = rate * BURST_SECONDS
  const start = rate * START_SECONDS
  const resume = rate * RESUME_SECONDS
  const clock = o.clock ?? systemClock
  // in the order last charged (a Map keeps insertion order): the first is the one charged longest ago.
  // Not lru-cache: it allocates arrays of `max` entries up front, and AGGREGATOR_MAX_BOARDS may be a million
  const buckets = new Map<string, Bucket>()
  const counts: Pacing['counts'] = { bytes: 0, waitedMs: 0, waited: 0, refused: 0 }
  const refill = (b: Bucket) => {
    const now = clock.now()
    b.tokens = Math.min(burst, b.tokens + ((now - b.at) * rate) / 1000)
    b.at = now
    return b
  }
  /** Ms until `board`'s bucket holds `floor` bytes (0: now). */
  const until = (board: string, floor: number): number => {
    const b = rate > 0 ? buckets.get(board) : undefined
    return !b || refill(b).tokens >= floor ? 0 : Math.ceil(((floor - b.tokens) * 1000) / rate)
  }
  /** Ms until `board`'s bucket is back at zero: 0 when it may stream now. */
  const waitMs = (board: string): number => until(board, 0)
  /** Takes `bytes` read from `board` out of its bucket (below zero if need be). */
  const take = (board: string, bytes: number) => {
    counts.bytes += bytes
    if (rate === 0) return
    const b = buckets.get(board) ?? { tokens: start, at: clock.now() }
    buckets.delete(board) // and set again: last in the order
    refill(b).tokens -= bytes
    buckets.set(board, b)
    if (buckets.size > Math.max(1, o.maxBoards)) buckets.delete(buckets.keys().next().value!)
  }
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
  const pacing: Pacing = { clock, counts, take, queue }
  return {
    ...pacing,
    waitMs,
    on: rate > 0,
    bytesPerSecond: rate,
    burst,
    start,
    /** Buckets held now (at most maxBoards). */
    get size() {
      return buckets.size
    },
    /** Bytes `board` may stream now: a new bucket's for a board with none, below zero for one over its budget. */
    level: (board: string): number => {
      const b = buckets.get(board)
      return b ? refill(b).tokens : start
    },
    /** Boards over their budget now. */
    over(): number {
      const now = clock.now()
      let n = 0
      for (const b of buckets.values()) if (b.tokens + ((now - b.at) * rate) / 1000 < 0) n++
      return n
    },
    /** Refuses a request to a board over its budget (503, Retry-After: when the excess is paid back), before any work for it. */
    admit(board: string) {
      const ms = waitMs(board)
      if (ms === 0) return
      counts.refused++
      throw new WireError('unavailable', `${board} is over this aggregator's budget of ${rate} bytes a second for its answers`, undefined, {
        retryAfter: Math.ceil(ms / 1000),
        overload: true,
      })
    },
    /** `body`, a board's answer, as the proxy reads it: through `paced` while the budget is on. */
    meter(body: Readable, board: string, signal: AbortSignal): Readable {
      return rate > 0 ? pipeline(body, paced(pacing, board, signal), () => {}) : body
    },
    /** The board is gone (removed, blocked): its bucket too. */
    drop: (board: string) => void buckets.delete(board),
  }
}
export type BoardBudget = ReturnType<typeof boardBudget>

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
