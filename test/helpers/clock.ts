import type { Clock } from '../../libs/shared/clock.js'

/** A clock a test drives: time moves only when `advance` says, and ticks run as it passes them. */
export function manualClock(start = 1_700_000_000_000) {
  let now = start
  const timers = new Set<{ ms: number; next: number; fn: () => void }>()
  const clock: Clock & { advance(ms: number): void } = {
    now: () => now,
    every(ms, fn) {
      const timer = { ms, next: now + ms, fn }
      timers.add(timer)
      return { stop: () => void timers.delete(timer) }
    },
    /** Moves time forward by `ms`, running every tick due on the way, in order. */
    advance(ms) {
      const end = now + ms
      for (;;) {
        let due: { ms: number; next: number; fn: () => void } | undefined
        for (const t of timers) if (t.next <= end && (!due || t.next < due.next)) due = t
        if (!due) break
        now = due.next
        due.next += due.ms
        due.fn()
      }
      now = end
    },
  }
  return clock
}
