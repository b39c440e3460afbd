import { systemClock, type Clock } from './clock.js'

/** Something that runs once when its deadline passes, unless cancelled first. */
export interface Due {
  expire(): void
  /** Deadlines' record of the bucket the item waits in (undefined: none), so an item is in one Deadlines at most. Only Deadlines writes it. */
  dueBucket?: number | undefined
}

/**
 * One timer for many deadlines: the long-polls and idle connections of a process. Deadlines are
 * kept in buckets of `tickMs`, so adding and cancelling cost a Set insert and delete, and one
 * interval (unref'd, running only while something is due) fires them, late by at most a tick.
 * A setTimeout per long-poll costs an object, a list insert and a clear each; this costs a slot.
 */
export class Deadlines<T extends Due = Due> {
  private readonly tickMs: number
  private readonly clock: Clock
  private readonly buckets = new Map<number, Set<T>>()
  private count = 0
  private timer: { stop(): void } | undefined
  /** Every bucket below this one has fired. */
  private next = 0

  constructor(tickMs = 100, clock: Clock = systemClock) {
    this.tickMs = tickMs
    this.clock = clock
  }

  get size() {
    return this.count
  }

  /** `item.expire()` (which must not throw) runs at `atMs` (epoch ms on this wheel's clock) or up to a tick later; a second add moves it. */
  add(item: T, atMs: number) {
    this.cancel(item)
    if (!this.timer) {
      this.next = Math.floor(this.clock.now() / this.tickMs)
      this.timer = this.clock.every(this.tickMs, () => this.fire())
    }
    const b = Math.max(Math.ceil(atMs / this.tickMs), this.next)
    let set = this.buckets.get(b)
    if (!set) this.buckets.set(b, (set = new Set()))
    set.add(item)
    item.dueBucket = b
    this.count++
  }

  /** Drops `item`'s deadline; true if it had one. */
  cancel(item: T): boolean {
    const b = item.dueBucket
    if (b === undefined) return false
    item.dueBucket = undefined
    this.count--
    const set = this.buckets.get(b)!
    set.delete(item)
    if (!set.size) this.buckets.delete(b)
    return true
  }

  /** Fires every bucket whose time has come, in order; stops the interval when nothing is left. */
  private fire() {
    const now = Math.floor(this.clock.now() / this.tickMs)
    while (this.next <= now && this.count) {
      const b = this.next++ // first: what an expiry adds lands in a later bucket
      const set = this.buckets.get(b)
      if (!set) continue
      // the bucket stays in place while it fires: an expiry that cancels another item of it takes effect
      for (const item of set) {
        set.delete(item)
        item.dueBucket = undefined
        this.count--
        item.expire()
      }
      this.buckets.delete(b)
    }
    if (this.next <= now) this.next = now + 1
    if (!this.count) {
      this.timer?.stop()
      this.timer = undefined
    }
  }
}
