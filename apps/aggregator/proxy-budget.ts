import { pipeline, type Readable } from 'node:stream'
import { systemClock, type Clock } from '../../libs/shared/clock.js'
import { WireError } from '../../libs/shared/domain/index.js'
import { boardQueues, paced, type Pacing, RESUME_SECONDS } from './proxy-pacing.js'

/** A full bucket holds this many seconds of its rate: what a board that was quiet may stream at once. */
const BURST_SECONDS = 4
/**
 * A new bucket (a board's first answer since the process started, or since its bucket went) holds
 * this many: a registrant who keeps registering fresh boards gets one second of the rate from
 * each, not the whole burst.
 */
const START_SECONDS = 1

export interface BoardBudgetOptions {
  /** Bytes a second each board's proxied answers may stream through this process (0: off). */
  bytesPerSecond: number
  /** Buckets kept at once (AGGREGATOR_MAX_BOARDS): past it, the one charged longest ago goes. */
  maxBoards: number
  clock?: Clock
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
  const queue = boardQueues({ until, waitMs }, resume)
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
