import { createRequire } from 'node:module'
import type { Redis, RedisOptions } from 'ioredis'
import type { Logger } from '../log/index.js'
import { reportRedisHealth } from '../metrics/index.js'
import { channels } from './channels.js'
import type { BusPath, PathSink } from './path.js'

/**
 * ioredis, loaded by the first connection: a process without REDIS_URL (the single process by
 * default, the embedded database always) never loads it, ~5 MB of RSS (bench/results/fresh-process.md).
 */
const require = createRequire(import.meta.url)
const ioredis = (): typeof Redis => (require('ioredis') as typeof import('ioredis')).Redis

/** A command connection: fails fast while Redis is down instead of queueing (callers fall back). */
export function redisClient(url: string, log: Logger, extra: RedisOptions = {}): Redis {
  const r = new (ioredis())(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    retryStrategy: (n) => Math.min(100 * n, 1000),
    enableAutoPipelining: true, // commands of one event-loop turn (a burst of rate-limit checks) share one write
    ...extra,
  })
  r.on('error', (err) => log.debug({ err: err.message }, 'redis connection error'))
  return r
}

/** Redis pub/sub on the board's channels: one publishing and one subscribed connection. */
export function redisPath(url: string, boardId: string, log: Logger, sink: PathSink): BusPath {
  const ch = channels(boardId)
  const pub = redisClient(url, log)
  const sub = redisClient(url, log, { enableOfflineQueue: true, maxRetriesPerRequest: null })
  let ready = false
  let readyOnce = false
  sub.on('ready', () => {
    ready = true
    if (readyOnce) sink.resync()
    readyOnce = true
  })
  sub.on('close', () => (ready = false))
  sub.subscribe(ch.wake, ch.invalidate).catch((err: Error) => log.warn({ err: err.message }, 'redis subscribe failed'))
  sub.on('message', (channel: string, message: string) => {
    if (channel === ch.wake) sink.wake(message, 'redis')
    else if (channel === ch.invalidate) sink.invalidation(message, 'redis')
  })
  const publish = (channel: string, msg: string) =>
    void pub.publish(channel, msg).catch((err: Error) => log.warn({ err: err.message }, 'wake-up not published to redis'))
  const healthy = () => ready && pub.status === 'ready'
  const stopReporting = reportRedisHealth(healthy) // wire_redis_up, read at each scrape
  return {
    name: 'redis',
    sendWake: (text) => publish(ch.wake, text),
    sendInvalidation: (text) => publish(ch.invalidate, text),
    healthy,
    async close() {
      stopReporting()
      sub.disconnect()
      pub.disconnect()
    },
  }
}
