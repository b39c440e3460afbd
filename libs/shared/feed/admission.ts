import type { BudgetWaiter, ClientLimits } from '../limits/index.js'
import type { ReadQuery } from '../domain/index.js'
import type { FeedPage } from './page.js'
import type { Caller } from '../caller.js'
import type { PageSink } from './waiters.js'

export type { Caller } from '../caller.js'

/** What an admission needs of the door: the budgets, and the read it ends in. */
export interface AdmissionDoor {
  readonly limits: Pick<ClientLimits, 'key' | 'takeRead' | 'takePoll' | 'givePoll'>
  /** Touches presence and reads the page into `sink` (the door's second step). */
  readPage(caller: Caller, q: ReadQuery, sink: PageSink): void
}

const READ = 0 // spending the read budget; no slot to take after it
const READ_THEN_POLL = 1 // spending the read budget; a long-poll slot after it
const POLL = 2 // taking the long-poll slot
const HELD = 3 // the slot is held: the read waits, with this as its sink
const DONE = 4 // refused, answered, or the slot given back

/**
 * One read's admission, as one object: it waits on the budgets as their callback (no promise, async
 * function or closure), then reads into `sink`; while a long-poll slot is held it is the read's sink
 * too, and gives the slot back on every outcome (answer, deadline, client gone, shutdown, failure)
 * before `sink` hears it. @NOTE 10,000 followers connecting at once each hold their admission across
 * one or two Redis round trips: what survives V8's scavenges then is promoted to the old generation
 * and stays there as garbage until a full collection, so it is kept to this object.
 */
export class Admitting implements BudgetWaiter, PageSink {
  private readonly door: AdmissionDoor
  private readonly caller: Caller
  private readonly q: ReadQuery
  private readonly sink: PageSink
  private readonly key: string
  private step: number

  constructor(door: AdmissionDoor, caller: Caller, q: ReadQuery, sink: PageSink, reads: boolean, waits: boolean) {
    this.door = door
    this.caller = caller
    this.q = q
    this.sink = sink
    this.key = door.limits.key(caller.address)
    this.step = reads ? (waits ? READ_THEN_POLL : READ) : POLL
  }

  /** Spends the budgets, then reads (maybe before it returns, when the budgets answer at once). */
  start(): void {
    if (this.step === POLL) this.door.limits.takePoll(this.key, this)
    else this.door.limits.takeRead(this.key, this)
  }

  /** A budget granted: the next one, or the read. */
  resolve(): void {
    if (this.step === READ_THEN_POLL) {
      this.step = POLL
      return void this.door.limits.takePoll(this.key, this)
    }
    const sink = this.step === POLL ? this : this.sink
    this.step = this.step === POLL ? HELD : DONE
    try {
      this.door.readPage(this.caller, this.q, sink)
    } catch (err) {
      sink.fail(err) // called from a limiter's batch: its other waiters go on
    }
  }

  /** A budget refused (its WireError) or failed: the caller hears why; nothing is held. */
  reject(err: unknown): void {
    this.step = DONE
    this.sink.fail(err)
  }

  page(p: FeedPage): void {
    try {
      this.release()
    } finally {
      this.sink.page(p) // the answer goes out whatever the give-back did
    }
  }

  fail(err: unknown): void {
    try {
      this.release()
    } finally {
      this.sink.fail(err)
    }
  }

  private release() {
    if (this.step !== HELD) return
    this.step = DONE
    this.door.limits.givePoll(this.key)
  }
}
