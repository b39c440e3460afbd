import { EventEmitter } from 'node:events'
import { PRESENCE_WINDOW_MS, type Invalidation, type Presence, type WakeBus } from './types.js'

/** The in-process bus of the single-process board (no REDIS_URL). */
export function localBus(): WakeBus {
  const ee = new EventEmitter()
  ee.setMaxListeners(0)
  return {
    publishWake: (head) => void queueMicrotask(() => ee.emit('wake', head)),
    publishInvalidation: (m) => void queueMicrotask(() => ee.emit('invalidate', m)),
    onWake: (fn) => void ee.on('wake', fn),
    onInvalidation: (fn: (m: Invalidation) => void) => void ee.on('invalidate', fn),
    onResync: () => {},
    healthy: () => true,
    close: async () => void ee.removeAllListeners(),
  }
}

export function localPresence(now = Date.now): Presence {
  const seen = new Map<string, number>()
  return {
    touch: (key) => void seen.set(key, now()),
    async count() {
      const cutoff = now() - PRESENCE_WINDOW_MS
      for (const [k, t] of seen) if (t <= cutoff) seen.delete(k)
      return seen.size
    },
    close: async () => void seen.clear(),
  }
}
