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

/**
 * How a Redis connection notices that its link died or stalled (the REDIS_* settings; 0: not at
 * all): keepalive for an idle one, a deadline for one waiting on an answer.
 */
export interface RedisLink {
  connectTimeoutMs: number
  keepAliveMs: number
  /** A command unanswered this long fails, and its connection is dropped and made again. */
  commandTimeoutMs: number
}

/**
 * A command connection: fails fast while Redis is down instead of queueing (callers fall back),
 * and within `link.commandTimeoutMs` when Redis stops answering. Losing and regaining the
 * connection is logged once each.
 */
export function redisClient(url: string, log: Logger, link?: RedisLink, extra: RedisOptions = {}): Redis {
  const r = new (ioredis())(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    retryStrategy: (n) => Math.min(100 * n, 1000),
    enableAutoPipelining: true, // commands of one event-loop turn (a burst of rate-limit checks) share one write
    ...(link && {
      connectTimeout: link.connectTimeoutMs,
      keepAlive: link.keepAliveMs, // 0: keepalive with the system's idle time (hours)
      // the command fails at its deadline; the socket, silent that long with a command out, is dropped and made again
      ...(link.commandTimeoutMs && { commandTimeout: link.commandTimeoutMs, socketTimeout: link.commandTimeoutMs }),
    }),
    ...extra,
  })
  let lost = false
  let lastError = ''
  r.on('error', (err) => {
    lastError = err.message
    log.debug({ err: err.message }, 'redis connection error')
  })
  // a connection that is going to be made again was lost (a manual disconnect does not reconnect)
  r.on('reconnecting', () => {
    if (!lost) log.warn({ err: lastError }, 'redis connection lost; trying again')
    lost = true
  })
  r.on('ready', () => {
    if (lost) log.info('redis connection back')
    lost = false
  })
  return r
}

/** Redis pub/sub on the board's channels: one publishing and one subscribed connection. */
export function redisPath(url: string, boardId: string, log: Logger, sink: PathSink, link?: RedisLink): BusPath {
  const ch = channels(boardId)
  const pub = redisClient(url, log, link)
  // the subscription is made again on every connection by this path, not by ioredis (whose renewal's
  // SUBSCRIBE nobody awaits: closed while it is out, the process had an unhandled rejection), so its
  // commands have no deadline (a subscribe queued while Redis is away must not fail for good); the
  // socket still has its keepalive and its timeout
  const sub = redisClient(url, log, link && { ...link, commandTimeoutMs: 0 }, {
    enableOfflineQueue: true,
    maxRetriesPerRequest: null,
    autoResubscribe: false,
    ...(link?.commandTimeoutMs && { socketTimeout: link.commandTimeoutMs }),
  })
  let ready = false
  let subscribedOnce = false
  // healthy, and the feed re-checked after a loss, once Redis has answered the SUBSCRIBE: a wake
  // published between a re-check and the subscription would otherwise be missed
  sub.on('ready', () =>
    sub.subscribe(ch.wake, ch.invalidate).then(
      () => {
        if (sub.status !== 'ready') return
        ready = true
        if (subscribedOnce) sink.resync()
        subscribedOnce = true
      },
      // refused on a live connection (a permission, say) is worth a warning; cut by a close, the next ready tries again
      (err: Error) => (sub.status === 'ready' ? log.warn : log.debug).call(log, { err: err.message }, 'redis subscribe failed'),
    ),
  )
  sub.on('close', () => (ready = false))
  sub.on('message', (channel: string, message: string) => {
    if (channel === ch.wake) sink.wake(message, 'redis')
    else if (channel === ch.invalidate) sink.invalidation(message, 'redis')
  })
  const healthy = () => ready && pub.status === 'ready'
  // one warning when a publish fails on a connection thought up; while Redis is known down (logged
  // by its connection) each publish that finds it so is a debug line, not one warning per publish
  const publish = (channel: string, msg: string) =>
    void pub.publish(channel, msg).catch((err: Error) => {
      if (healthy()) log.warn({ err: err.message }, 'wake-up not published to redis')
      else log.debug({ err: err.message }, 'wake-up not published to redis')
    })
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
