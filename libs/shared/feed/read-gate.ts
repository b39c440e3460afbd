import { WireError } from '../domain/index.js'
import { metrics } from '../metrics/index.js'

/**
 * Reads below the tail a read side admits at once: past `max` running, up to `queueMax` wait for a
 * turn; past that a new one is refused at once with 503 `unavailable` and Retry-After, before it
 * costs a query. Only a request's first page passes here: a wait already admitted (its wake-ups,
 * its deadline) is never refused. Followers near the head read from the tail and never queue
 * behind a flood of deep reads, so an overload is paid by the excess, not by them.
 */
export class ReadGate {
  private running = 0
  private readonly waiting: Array<() => void> = []
  private readonly max: number
  private readonly queueMax: number

  constructor(max: number, queueMax: number) {
    this.max = max
    this.queueMax = queueMax
  }

  /** Runs `read` when a turn is free; refuses at once when the queue is full. `max` 0: no gate. */
  async run<T>(read: () => Promise<T>): Promise<T> {
    if (this.max <= 0) return read()
    if (this.running >= this.max) {
      if (this.waiting.length >= this.queueMax) {
        metrics.refused.inc({ reason: 'database_reads' })
        throw new WireError('unavailable', 'too many reads below the recent feed at once; retry shortly', undefined, { retryAfter: 1 })
      }
      await new Promise<void>((turn) => this.waiting.push(turn))
    } else this.running++
    try {
      return await read()
    } finally {
      const next = this.waiting.shift()
      if (next)
        next() // the turn passes on: `running` stays
      else this.running--
    }
  }
}
