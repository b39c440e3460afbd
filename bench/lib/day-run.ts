import { setTimeout as sleep } from 'node:timers/promises'
import { purgeExpired, type PurgeReport } from '../../apps/sweeper/jobs/purge-expired.js'
import { refreshStats } from '../../apps/sweeper/jobs/refresh-stats.js'
import { CARRY_MAX_ROWS, ident, migrate, type NewSignal, postgresDb, signalPurger, statsWriter } from '../../libs/shared/db/index.js'
import { createLogger } from '../../libs/shared/log/index.js'
import { clockedUrl, installClock, setClock } from './day-clock.js'
import { clockKeys, keyLookups } from './day-keys.js'
import { firstPartition, load, type LoadResult } from './day-load.js'
import { dayRows, type DayShape } from './day-rows.js'
import { storageUse, type StorageUse } from './day-storage.js'
import { watchStandby, type Watch } from './day-watch.js'
import { Cleanup, pgUrl, sql, startPrimary, startStandby } from './pg-cluster.js'
import { clusterCpuMs, loadAverage, machineTicks, postmasterPid, processCpuMs } from './proc-cpu.js'

// The simulated day (bench/day.ts): a primary and a streaming standby of its own (scripts/cluster.sh,
// scripts/replica.sh), the board's schema migrated on it, one writer lane publishing the day's
// signals (day-load.ts), the sweeper's two jobs run every `sweepEveryMs` on the simulated clock
// (day-clock.ts) exactly as the sweeper process runs them (the functions pg-boss hands each slot),
// and the standby watched throughout (day-watch.ts). Everything it starts is undone at the end.

export interface DayOptions {
  shape: DayShape
  /** Simulated hours to publish: past a day, so that partitions reach their drop. */
  simHours: number
  /** Real signals per second (0: as fast as they commit). */
  rate: number
  maxBatch: number
  /** SIGNAL_SWEEP_GRACE_SECONDS. */
  graceSeconds: number
  /** Real ms between sweeps (each sweep runs on the simulated time of the head). */
  sweepEveryMs: number
  readsPerSecond: number
  /** The primary's and the standby's ports. */
  ports: [number, number]
  note: (line: string) => void
}

export interface SweepRun {
  /** performance.now() at its start, when the purge began, at its end. */
  t0: number
  t1: number
  t2: number
  simHours: number
  rolledUp: number
  rollupCpuMs: number
  purge: PurgeReport
  purgeCpuMs: number
}

export interface DayRun {
  options: DayOptions
  /** Seq values per partition (six simulated hours), and the carry limit scaled with it. */
  width: number
  carryMax: number
  load: LoadResult
  sweeps: SweepRun[]
  watch: Watch
  storage: StorageUse
  /** Publishes with an Idempotency-Key. */
  keys: number
  cpuMs: { writer: number; keys: number; sweeper: number; primary: number; standby: number; generator: number }
  walBytes: number
  machine: { loadBefore: string; loadAfter: string; busyShare: number; seconds: number }
}

/** Signals per 6 h partition at 5,000/s: what the carry limit (CARRY_MAX_ROWS) is sized against. */
export const REAL_PARTITION_ROWS = 5000 * 6 * 3600

const quiet = createLogger('sweeper', 'silent')

export async function runDay(o: DayOptions): Promise<DayRun> {
  const cleanup = new Cleanup()
  try {
    const [pPort, sPort] = o.ports
    o.note(`starting a primary on ${pPort} and a streaming standby on ${sPort}`)
    await startPrimary(cleanup, pPort, 'async')
    await startStandby(cleanup, sPort, pPort)
    const url = pgUrl(pPort)
    const schema = 'bench_day'
    const s = ident(schema)
    await migrate(url, schema)
    const width = Math.round(o.shape.dayRows / 4)
    const carryMax = Math.max(1, Math.round((CARRY_MAX_ROWS * width) / REAL_PARTITION_ROWS))
    // the writer's connection on the simulated clock: the keys its batches store take their created_at from it
    const writerDb = postgresDb(clockedUrl(url), { max: 1, applicationName: 'wire-bench-day-writer' })
    const makerDb = postgresDb(url, { max: 1, applicationName: 'wire-bench-day-partitions' })
    const sweepDb = postgresDb(clockedUrl(url), { max: 1, applicationName: 'wire-bench-day-sweeper' })
    cleanup.add(() => Promise.all([writerDb.close(), makerDb.close(), sweepDb.close()]))
    await installClock(writerDb)
    await clockKeys(writerDb, s)
    await firstPartition(writerDb, s, width)
    const pid = async (db: typeof writerDb) => (await db.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid
    const [writerPid, sweepPid] = [await pid(writerDb), await pid(sweepDb)]
    const primaryPm = postmasterPid(`/tmp/wire-cluster-${pPort}/data`)
    const standbyPm = postmasterPid(`/tmp/wire-replica-${sPort}/data`)

    const startMs = Math.floor(Date.now() / 60_000) * 60_000 - o.simHours * 3_600_000
    const rows = dayRows(o.shape, startMs)
    let head = 0
    const simNow = () => rows.simMs(Math.max(1, head))
    const stop = new AbortController()
    const keys = keyLookups(url, s, o.shape.keyShare)
    await setClock(writerDb, simNow())
    let writerClockAt = simNow()
    /** Before a batch: its keys looked up, and the writer's clock moved on once a simulated minute. */
    const beforeInsert = async (batch: readonly NewSignal[]) => {
      if (simNow() - writerClockAt >= 60_000) await setClock(writerDb, (writerClockAt = simNow()))
      return keys.lookUp(batch)
    }
    cleanup.add(() => keys.close())
    const keyPids = await keys.pids()
    const keysCpu = () => keyPids.reduce((a, p) => a + processCpuMs(p), 0)
    const watch = watchStandby({
      primaryUrl: url,
      standbyUrl: pgUrl(sPort),
      s,
      graceSeconds: o.graceSeconds,
      simNow,
      everyMs: 100,
      readsPerSecond: o.readsPerSecond,
      stop: stop.signal,
    })

    const purger = signalPurger(sweepDb, s)
    const stats = statsWriter(sweepDb, s)
    const sweeps: SweepRun[] = []
    const loaded = new AbortController()
    let sweepError: unknown
    const sweeper = (async () => {
      while (!loaded.signal.aborted) {
        const next = performance.now() + o.sweepEveryMs
        const sim = simNow()
        await setClock(sweepDb, sim)
        const c0 = processCpuMs(sweepPid)
        const t0 = performance.now()
        const st = await refreshStats(stats, quiet, { batchSize: 20_000, budgetMs: 5000, pauseMs: 10 })
        const c1 = processCpuMs(sweepPid)
        const t1 = performance.now()
        // the production budget (at least 5 s), batch (500) and pause (10 ms): real time, as at 5,000/s
        const purge = await purgeExpired(purger, quiet, {
          graceSeconds: o.graceSeconds,
          batchSize: 500,
          budgetMs: 5000,
          pauseMs: 10,
          carryMax,
        })
        sweeps.push({
          t0,
          t1,
          t2: performance.now(),
          simHours: (sim - startMs) / 3_600_000,
          rolledUp: st.counted,
          rollupCpuMs: c1 - c0,
          purge,
          purgeCpuMs: processCpuMs(sweepPid) - c1,
        })
        await sleep(Math.max(0, next - performance.now()))
      }
    })().catch((err: unknown) => {
      sweepError = err // the run fails with it, once the load (stopped here) has ended
      stop.abort()
    })

    const total = Math.round((o.shape.dayRows * o.simHours) / 24)
    o.note(
      `publishing ${total.toLocaleString('en')} signals (${o.simHours} simulated hours at ${o.shape.dayRows.toLocaleString('en')} a day), ${o.rate || 'as many as commit'}/s; partitions of ${width.toLocaleString('en')}, carry limit ${carryMax}`,
    )
    const lsn0 = (await sql<{ lsn: string }>(url, 'select pg_current_wal_lsn()::text as lsn'))[0]!.lsn
    const before = {
      writer: processCpuMs(writerPid),
      keys: keysCpu(),
      sweeper: processCpuMs(sweepPid),
      primary: clusterCpuMs(primaryPm),
      standby: clusterCpuMs(standbyPm),
      generator: process.cpuUsage(),
      machine: machineTicks(),
      t: performance.now(),
    }
    const loadBefore = loadAverage()
    let result: LoadResult
    try {
      result = await load(writerDb, makerDb, s, {
        rows,
        total,
        rate: o.rate,
        maxBatch: o.maxBatch,
        width,
        beforeInsert,
        onHead: (h) => void (head = h),
        stop: stop.signal,
      })
    } finally {
      loaded.abort()
      stop.abort()
      await watch.done.catch((err: unknown) => o.note(`the standby's watch failed: ${(err as Error).message}`))
    }
    await sweeper
    if (sweepError) throw sweepError
    const gen = process.cpuUsage(before.generator)
    const m = machineTicks()
    const cpuMs = {
      writer: processCpuMs(writerPid) - before.writer,
      keys: keysCpu() - before.keys,
      sweeper: processCpuMs(sweepPid) - before.sweeper,
      primary: clusterCpuMs(primaryPm) - before.primary,
      standby: clusterCpuMs(standbyPm) - before.standby,
      generator: (gen.user + gen.system) / 1000,
    }
    const machine = {
      loadBefore,
      loadAfter: loadAverage(),
      busyShare: (m.busy - before.machine.busy) / (m.total - before.machine.total),
      seconds: (performance.now() - before.t) / 1000,
    }
    const walBytes = Number((await sql<{ n: string }>(url, `select pg_wal_lsn_diff(pg_current_wal_lsn(), '${lsn0}') as n`))[0]!.n)
    const storage = await storageUse(writerDb, s, head)
    o.note(`done: ${result.inserted.toLocaleString('en')} signals in ${result.seconds.toFixed(1)} s, ${sweeps.length} sweeps`)
    return { options: o, width, carryMax, load: result, keys: keys.keyed(), sweeps, watch, storage, cpuMs, walBytes, machine }
  } finally {
    await cleanup.run()
  }
}
