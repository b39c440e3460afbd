import { randomBytes } from 'node:crypto'
import { createLogger, type Logger } from '../log/index.js'
import { metrics } from '../metrics/index.js'
import { localListeners } from './listeners.js'
import { decodeInvalidation, decodeWake, encodeInvalidation, encodeWake } from './messages.js'
import type { ClientConfig } from 'pg'
import type { BusPath, PathSink } from './path.js'
import { pgPath } from './pg-notify.js'
import { redisPath, type RedisLink } from './redis.js'
import type { WakeBus } from './types.js'

export interface WakeBusOptions {
  /** The board's id (readBoardId): names the Redis channels and the NOTIFY channel. */
  boardId: string
  log: Logger
  /** Redis pub/sub between processes. */
  redisUrl?: string | undefined
  /** The Redis connections' deadlines and keepalive (REDIS_*). */
  redisLink?: RedisLink
  /** LISTEN/NOTIFY on the primary (its direct URL, never a replica or a transaction pooler). */
  listenUrl?: string | undefined
  /** The LISTEN connection's deadlines and keepalive (`pg` settings from DB_*). */
  listenDeadlines?: ClientConfig
}

/**
 * The board's wake-up bus: this process's listeners first, synchronously, then every path given
 * (Redis, LISTEN/NOTIFY, both, or none for a single process). With both, a message lost on one
 * path (Redis down) still arrives by the other; the copy a second path brings is dropped.
 */
export function wakeBus(o: WakeBusOptions): WakeBus {
  const local = localListeners(o.log)
  const counted = (path: BusPath['name'], delivered: boolean | null) =>
    metrics.busMessages.inc({ path, outcome: delivered === null ? 'invalid' : delivered ? 'delivered' : 'duplicate' })
  const sink: PathSink = {
    wake(text, path) {
      const head = decodeWake(text)
      counted(path, head === null ? null : local.wake(head))
    },
    invalidation(text, path) {
      const m = decodeInvalidation(text)
      if (m === null) return counted(path, null)
      const { n, ...inv } = m
      const settled = local.invalidation(inv, n)
      counted(path, settled !== null)
    },
    resync: () => local.resync(),
  }
  const paths: BusPath[] = []
  if (o.redisUrl) paths.push(redisPath(o.redisUrl, o.boardId, o.log, sink, o.redisLink))
  if (o.listenUrl) paths.push(pgPath(o.listenUrl, o.boardId, o.log, sink, o.listenDeadlines))

  return {
    publishWake(head, committed) {
      local.wake(head, committed)
      const text = encodeWake(head)
      for (const p of paths) p.sendWake(text)
    },
    async publishInvalidation(m) {
      const n = randomBytes(9).toString('base64url')
      const settled = local.invalidation(m, n)
      const text = encodeInvalidation({ ...m, n })
      for (const p of paths) p.sendInvalidation(text)
      await settled
    },
    onWake: local.onWake,
    onInvalidation: local.onInvalidation,
    onResync: local.onResync,
    healthy: () => paths.length === 0 || paths.some((p) => p.healthy()),
    async close() {
      local.clear()
      await Promise.all(paths.map((p) => p.close()))
    },
  }
}

/** The single process's bus (embedded database, or one process on PostgreSQL by choice). */
export const localBus = (log?: Logger): WakeBus => wakeBus({ boardId: 'local', log: log ?? createLogger('server', 'silent') })

/** Redis only (kept for callers that build a bus by hand). */
export const redisBus = (url: string, boardId: string, log: Logger): WakeBus => wakeBus({ boardId, log, redisUrl: url })
