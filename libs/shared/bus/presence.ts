import { hash } from 'node:crypto'
import type { Redis } from 'ioredis'
import type { Logger } from '../log/index.js'
import { channels } from './channels.js'
import { PRESENCE_WINDOW_MS, type Presence } from './types.js'

/** At most this many pollers are remembered between counts (anonymous pollers are free to make). */
export const MAX_PENDING = 100_000

/** recentPollers of a single-process board: the map is kept in order of last touch, oldest first. */
export function localPresence(now = Date.now): Presence {
  const seen = new Map<string, number>()
  const prune = () => {
    const cutoff = now() - PRESENCE_WINDOW_MS
    for (const [k, t] of seen) {
      if (t > cutoff) break
      seen.delete(k)
    }
  }
  return {
    touch(key) {
      const known = seen.delete(key) // re-inserted below: moves to the young end
      if (!known && seen.size >= MAX_PENDING) prune()
      if (known || seen.size < MAX_PENDING) seen.set(key, now()) // bounded: beyond the cap a new poller is not counted
    },
    async count() {
      prune()
      return seen.size
    },
    close: async () => void seen.clear(),
  }
}

/** A poller's member in the sorted set: a hash of its key, so no identity or address is stored in Redis. */
const member = (k: string) => hash('sha256', k, 'base64url').slice(0, 22)

/**
 * recentPollers across the reader fleet: one sorted set, member = hash of the poller key, score =
 * last seen. Touches are gathered in memory and flushed once a second in one round trip.
 */
export function redisPresence(redis: Redis, boardId: string, log: Logger, now = Date.now): Presence {
  const key = channels(boardId).presence
  let pending = new Map<string, number>()
  const flush = async () => {
    if (!pending.size) return
    const batch = pending
    pending = new Map()
    const args: Array<string | number> = []
    for (const [k, t] of batch) args.push(t, member(k))
    await redis
      .multi()
      .zadd(key, ...args)
      .zremrangebyscore(key, 0, now() - PRESENCE_WINDOW_MS)
      .pexpire(key, PRESENCE_WINDOW_MS * 2)
      .exec()
      .catch((err: Error) => {
        // Redis not ready (or down): keep the touches for the next flush, newer ones win
        for (const [k, t] of batch) if (!pending.has(k)) pending.set(k, t)
        log.debug({ err: err.message }, 'presence not recorded yet')
      })
  }
  const timer = setInterval(() => void flush(), 1000)
  timer.unref()
  return {
    // @NOTE bounded while Redis is down: beyond the cap a new poller is simply not counted. Keys are
    // hashed when flushed, once per poller and second rather than once per poll
    touch: (k) => void ((pending.size < MAX_PENDING || pending.has(k)) && pending.set(k, now())),
    async count() {
      await flush()
      try {
        return await redis.zcount(key, now() - PRESENCE_WINDOW_MS, '+inf')
      } catch {
        return pending.size // Redis unreachable: what this process saw since (a lower bound)
      }
    },
    async close() {
      clearInterval(timer)
      await flush()
    },
  }
}
