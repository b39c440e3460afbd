import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import { type Ident, postgresDb, signalReader } from '../../libs/shared/db/index.js'
import type { ReadFilter } from '../../libs/shared/domain/index.js'
import { clockedUrl, setClock } from './day-clock.js'

// What the standby does while the day runs (bench/day.ts): how far behind the primary it is, and
// how long a reader's queries take on it. Both sample continuously; the run sorts the samples by
// what the sweeper was doing at the time.

export interface LagSample {
  /** performance.now() of the sample. */
  t: number
  /** WAL the primary has written that the standby has not replayed. */
  bytes: number
  /** pg_stat_replication.replay_lag (null while the standby is idle and caught up). */
  seconds: number | null
}

export interface ReadSample {
  t: number
  ms: number
  kind: 'page' | 'byId'
}

export interface Watch {
  lag: LagSample[]
  /** Samples with no standby connected to the primary. */
  disconnected: number
  reads: ReadSample[]
  readErrors: string[]
  done: Promise<void>
}

const noFilter: ReadFilter = { type: null, tags: [], origin: null, q: null, sinceMs: null, includeExpired: false, refId: null }

/**
 * Samples the standby's lag every `everyMs` (pg_stat_replication on the primary), and reads from
 * the standby as a reader does, `readsPerSecond` times a second: the newest page of 100, then one
 * of its signals by id (a probe of every partition's `id` index), on the simulated clock.
 */
export function watchStandby(o: {
  primaryUrl: string
  standbyUrl: string
  s: Ident
  graceSeconds: number
  simNow: () => number
  everyMs: number
  readsPerSecond: number
  stop: AbortSignal
}): Watch {
  const w: Watch = { lag: [], disconnected: 0, reads: [], readErrors: [], done: Promise.resolve() }
  const sampler = async () => {
    const c = new pg.Client({ connectionString: o.primaryUrl, application_name: 'wire-bench-day-lag' })
    await c.connect()
    try {
      while (!o.stop.aborted) {
        const { rows } = await c.query<{ bytes: number; seconds: number | null }>(
          `select pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn)::float8 as bytes, extract(epoch from replay_lag)::float8 as seconds
           from pg_stat_replication where state = 'streaming' limit 1`,
        )
        if (rows[0]) w.lag.push({ t: performance.now(), bytes: rows[0].bytes, seconds: rows[0].seconds })
        else w.disconnected++
        await sleep(o.everyMs)
      }
    } finally {
      await c.end()
    }
  }
  const reader = async () => {
    const db = postgresDb(clockedUrl(o.standbyUrl), { max: 1, applicationName: 'wire-bench-day-reader' })
    const r = signalReader(db, o.s, { graceSeconds: o.graceSeconds })
    try {
      while (!o.stop.aborted) {
        const now = o.simNow()
        try {
          await setClock(db, now)
          const t0 = performance.now()
          const page = await r.newest(100, noFilter, now)
          const t1 = performance.now()
          w.reads.push({ t: t1, ms: t1 - t0, kind: 'page' })
          const pick = page.signals[Math.floor(Math.random() * page.signals.length)]
          if (pick) {
            await r.byId(pick.id)
            const t2 = performance.now()
            w.reads.push({ t: t2, ms: t2 - t1, kind: 'byId' })
          }
        } catch (err) {
          if (w.readErrors.length < 20) w.readErrors.push((err as Error).message)
        }
        await sleep(1000 / o.readsPerSecond)
      }
    } finally {
      await db.close()
    }
  }
  w.done = Promise.all([sampler(), reader()]).then(() => {})
  return w
}
