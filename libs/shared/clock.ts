/**
 * The one clock time-driven code reads: the wall time, and a repeating tick. Production uses
 * `systemClock`; a test hands a clock it drives (test/helpers/clock.ts) instead of waiting on real
 * time.
 */
export interface Clock {
  now(): number
  /** Calls `fn` every `ms` until stopped; never keeps the process alive on its own. */
  every(ms: number, fn: () => void): { stop(): void }
}

export const systemClock: Clock = {
  now: () => Date.now(),
  every(ms, fn) {
    const timer = setInterval(fn, ms).unref()
    return { stop: () => clearInterval(timer) }
  },
}
