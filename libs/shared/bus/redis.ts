import { createHash } from 'node:crypto'
import { Redis, type RedisOptions } from 'ioredis'
import type { Logger } from '../log/index.js'
import { reportRedisHealth } from '../metrics/index.js'
import { channels } from './channels.js'
import { PRESENCE_WINDOW_MS, type Invalidation, type Presence, type WakeBus } from './types.js'

/** A command connection: fails fast while Redis is down instead of queueing (callers fall back). */
export function redisClient(url: string, log: Logger, extra: RedisOptions = {}): Redis {
  const r = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    retryStrategy: (n) => Math.min(100 * n, 1000),
    enableAutoPipelining: true, // commands of one event-loop turn (a burst of rate-limit checks) share one write
    ...extra,
  })
  r.on('error', (err) => log.debug({ err: err.message }, 'redis connection error'))
  return r
}

export function redisBus(url: string, schema: string, log: Logger): WakeBus {
  const ch = channels(schema)
  const pub = redisClient(url, log)
  const sub = redisClient(url, log, { enableOfflineQueue: true, maxRetriesPerRequest: null })
  const wake: Array<(h: number) => void> = []
  const inval: Array<(m: Invalidation) => void> = []
  const resync: Array<() => void> = []
  let ready = false
  let readyOnce = false
  sub.on('ready', () => {
    ready = true
    if (readyOnce) for (const fn of resync) fn()
    readyOnce = true
  })
  sub.on('close', () => (ready = false))
  sub.subscribe(ch.wake, ch.invalidate).catch((err: Error) => log.warn({ err: err.message }, 'redis subscribe failed'))
  sub.on('message', (channel: string, message: string) => {
    try {
      if (channel === ch.wake) {
        const head = Number(message)
        if (Number.isSafeInteger(head)) for (const fn of wake) fn(head)
      } else if (channel === ch.invalidate) {
        const m = JSON.parse(message) as Invalidation
        for (const fn of inval) fn(m)
      }
    } catch (err) {
      log.warn({ err }, 'bad bus message ignored')
    }
  })
  const publish = (channel: string, msg: string) =>
    void pub.publish(channel, msg).catch((err: Error) => log.warn({ err: err.message }, 'wake-up not published'))
  const healthy = () => ready && pub.status === 'ready'
  const stopReporting = reportRedisHealth(healthy) // wire_redis_up, read at each scrape
  return {
    publishWake: (head) => publish(ch.wake, String(head)),
    publishInvalidation: (m) => publish(ch.invalidate, JSON.stringify(m)),
    onWake: (fn) => void wake.push(fn),
    onInvalidation: (fn) => void inval.push(fn),
    onResync: (fn) => void resync.push(fn),
    healthy,
    async close() {
      stopReporting()
      sub.disconnect()
      pub.disconnect()
    },
  }
}

/**
 * recentPollers across the reader fleet: one sorted set, member = hash of the poller key, score =
 * last seen. Touches are gathered in memory and flushed once a second in one round trip.
 */
export function redisPresence(redis: Redis, schema: string, log: Logger, now = Date.now): Presence {
  const key = channels(schema).presence
  let pending = new Map<string, number>()
  const flush = async () => {
    if (!pending.size) return
    const batch = pending
    pending = new Map()
    const args: Array<string | number> = []
    for (const [member, t] of batch) args.push(t, member)
    await redis
      .multi()
      .zadd(key, ...args)
      .zremrangebyscore(key, 0, now() - PRESENCE_WINDOW_MS)
      .pexpire(key, PRESENCE_WINDOW_MS * 2)
      .exec()
      .catch((err: Error) => {
        // Redis not ready (or down): keep the touches for the next flush, newer ones win
        for (const [member, t] of batch) if (!pending.has(member)) pending.set(member, t)
        log.debug({ err: err.message }, 'presence not recorded yet')
      })
  }
  const timer = setInterval(() => void flush(), 1000)
  timer.unref()
  return {
    touch: (k) => void pending.set(createHash('sha256').update(k).digest('base64url').slice(0, 22), now()),
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
