import { readFileSync } from 'node:fs'
import { type Db, ident, migrate, postgresDb, signalPartitions, signalReader, signalWriter } from '../libs/shared/db/index.js'
import { newSignalId, type ReadFilter } from '../libs/shared/domain/index.js'
import { round } from './lib/load.js'

// npm run bench:storage: the partitioned `signals` table at size. Builds two boards by SQL on this
// machine's PostgreSQL: a large one (STORAGE_ROWS, default 10 million: a closed partition of expired
// rows, the size of a day at a lower rate, plus LIVE_ROWS live rows in the open one) and a small one
// (100,000 live rows). Measures, on the same connection and in the same run, the newest page, a
// deep-cursor page and by-id reads on each (ms per read, and the PostgreSQL backend's CPU per read
// from /proc), then drops the closed partition with the sweeper's own code (signals/partitions.ts)
// while a publisher runs, and prints publish latency before and during the drop. Never runs ANALYZE.
// Settings: STORAGE_ROWS (10000000), LIVE_ROWS (1000000), BENCH_SECONDS (2), DATABASE_URL.

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test'
const ROWS = Number(process.env.STORAGE_ROWS ?? 10_000_000)
const LIVE = Math.min(ROWS - 1_000_000, Number(process.env.LIVE_ROWS ?? 1_000_000))
const SECONDS = Number(process.env.BENCH_SECONDS ?? 2)
const SMALL = 100_000
/** STORAGE_KEEP=1: keep both boards (schemas bench_storage_big, bench_storage_small) to look inside; no drop. */
const KEEP = process.env.STORAGE_KEEP === '1'
const CHUNK = 1_000_000
const out = (s: string) => process.stdout.write(`${s}\n`)
const noFilter: ReadFilter = { type: null, tags: [], origin: null, q: null, sinceMs: null, includeExpired: false, refId: null }

/** Rows (from, to] as the writer stores them; `live`: unexpired, else expired two days ago. */
const rowsSql = (table: string, from: number, to: number, live: boolean) => `
  insert into ${table} (seq, id, origin, origin_uri, origin_verified, type, tags, payload, ttl_seconds, created_at, expires_at)
  select i, substr(md5(i::text), 1, 20), 'fp_' || (i % 1000), 'sw://localhost/identities/x', true, 'broadcast', array['bench', 'g' || (i % 4)],
         '{"$type":"broadcast","text":"signal ' || i || ' with a few words of payload to be realistic"}', 3600,
         ${live ? `now() - (${to} - i) * interval '1 millisecond'` : `now() - interval '3 days'`},
         ${live ? `now() + interval '1 hour'` : `now() - interval '2 days'`}
  from generate_series(${from + 1}, ${to}) i`

async function build(db: Db, schema: string, rows: number, live: number): Promise<number> {
  const t0 = performance.now()
  await db.exec(`drop schema if exists ${schema} cascade`)
  await migrate(DATABASE_URL, schema)
  await db.exec(
    `set maintenance_work_mem = '256MB'; alter table ${schema}.signals detach partition ${schema}.signals_s0; drop table ${schema}.signals_s0`,
  )
  // each partition loaded bare, then attached: its indexes are built once, sorted, not row by row
  const load = async (name: string, lo: string, hi: number, from: number, to: number, live: boolean) => {
    await db.exec(`create table ${schema}.${name} (like ${schema}.signals including defaults)`)
    for (let f = from; f < to; f += CHUNK) await db.exec(rowsSql(`${schema}.${name}`, f, Math.min(to, f + CHUNK), live))
    await db.exec(`create unique index "${name}_id_key" on ${schema}.${name} (id)`)
    await db.exec(`alter table ${schema}.signals attach partition ${schema}.${name} for values from (${lo}) to (${hi})`)
  }
  const dead = rows - live
  // a closed partition of expired rows (the one a drop retires), then the open one
  if (dead > 0) await load('signals_s0', 'minvalue', dead + 1, 0, dead, false)
  await load(
    dead > 0 ? `signals_s${dead + 1}` : 'signals_s0',
    dead > 0 ? String(dead + 1) : 'minvalue',
    rows + 10_000_000,
    dead,
    rows,
    true,
  )
  await db.exec(`update ${schema}.feed_head set seq = ${rows}; update ${schema}.stats_rollup set last_seq = ${rows}`)
  return (performance.now() - t0) / 1000
}

/** utime + stime of a process, in ms (/proc/<pid>/stat, clock ticks of 10 ms). */
const cpuMs = (pid: number) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
  return (Number(f[11]) + Number(f[12])) * 10
}

async function measure(pid: number, name: string, op: () => Promise<unknown>) {
  for (let i = 0; i < 50; i++) await op() // warm the connection's caches and plans
  const times: number[] = []
  const cpu0 = cpuMs(pid)
  const t0 = performance.now()
  while (performance.now() - t0 < SECONDS * 1000) {
    const t = performance.now()
    await op()
    times.push(performance.now() - t)
  }
  const cpu = cpuMs(pid) - cpu0
  times.sort((a, b) => a - b)
  return {
    read: name,
    reads: times.length,
    p50ms: round(times[times.length >> 1]!, 3),
    p99ms: round(times[Math.floor(times.length * 0.99)]!, 3),
    pgCpuMsPerRead: round(cpu / times.length, 3),
  }
}

async function reads(label: string, db: Db, schema: string, rows: number, live: number) {
  const r = signalReader(db, ident(schema), { graceSeconds: 86_400 })
  const pid = (await db.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid
  const now = Date.now()
  const first = rows - live
  let k = 0
  const ids: string[] = (
    await db.query<{ id: string }>(
      `select substr(md5(i::text), 1, 20) as id from generate_series(1, 1000) g, lateral (select ${first} + 1 + (g * 7919) % ${live} as i) x`,
    )
  ).rows.map((x) => x.id)
  const results = [
    await measure(pid, 'newest 100', () => r.newest(100, noFilter, now)),
    await measure(pid, 'deep cursor 100', () => r.pageAfter(first + Math.floor(live / 2) + (k++ % 1000) * 50, 100, noFilter, now)),
    await measure(pid, 'by id', () => r.byId(ids[k++ % ids.length]!)),
  ]
  for (const x of results) out(JSON.stringify({ board: label, ...x }))
  return results
}

async function dropWhilePublishing(db: Db, schema: string) {
  // the publisher has a connection of its own, as a writer process would
  const wdb = postgresDb(DATABASE_URL, { max: 1, applicationName: 'wire-bench-storage-writer' })
  const writer = signalWriter(wdb, ident(schema))
  const parts = signalPartitions(db, ident(schema))
  const lat: { before: number[]; during: number[] } = { before: [], during: [] }
  let phase: keyof typeof lat = 'before'
  let stop = false
  const publisher = (async () => {
    while (!stop) {
      const now = Date.now()
      const t = performance.now()
      await writer.insertBatch([
        {
          id: newSignalId(),
          origin: 'fp_pub',
          originName: null,
          originUri: 'sw://localhost/identities/p',
          originVerified: true,
          type: 'broadcast',
          tags: [],
          payloadText: '{"$type":"broadcast"}',
          refId: null,
          ttl: 3600,
          createdAtMs: now,
          expiresAtMs: now + 3_600_000,
        },
      ])
      lat[phase].push(performance.now() - t)
    }
  })()
  const t0 = performance.now()
  while (performance.now() - t0 < 1000) await new Promise((r) => setTimeout(r, 50))
  phase = 'during'
  const d0 = performance.now()
  const report = await parts.retire(86_400)
  const dropMs = performance.now() - d0
  stop = true
  await publisher
  await wdb.close()
  const stat = (a: number[]) => (
    a.sort((x, y) => x - y), { publishes: a.length, p50ms: round(a[a.length >> 1] ?? 0, 2), maxMs: round(a.at(-1) ?? 0, 2) }
  )
  out(
    JSON.stringify({
      drop: {
        dropped: report.dropped,
        carried: report.carried,
        gigabytes: round(report.bytes / 1e9, 2),
        signalsLockedMs: round(report.detachMs, 1),
        filesRemovedMs: round(report.dropMs, 1),
        totalMs: round(dropMs, 1),
      },
      publishBefore: stat(lat.before),
      publishDuringDrop: stat(lat.during),
    }),
  )
}

async function main() {
  const db = postgresDb(DATABASE_URL, { max: 1, applicationName: 'wire-bench-storage' })
  const big = `bench_storage_big`
  const small = `bench_storage_small`
  try {
    out(
      `building: ${ROWS.toLocaleString('en')} rows (${(ROWS - LIVE).toLocaleString('en')} expired in closed partitions, ${LIVE.toLocaleString('en')} live) and ${SMALL.toLocaleString('en')} live rows`,
    )
    const bs = await build(db, big, ROWS, LIVE)
    const ss = await build(db, small, SMALL, SMALL)
    out(JSON.stringify({ builtSeconds: { big: round(bs, 1), small: round(ss, 1) } }))
    await reads(`${ROWS / 1e6} M rows`, db, big, ROWS, LIVE)
    await reads('100 k rows', db, small, SMALL, SMALL)
    if (KEEP) return
    await dropWhilePublishing(db, big)
  } finally {
    if (!KEEP) await db.exec(`drop schema if exists ${big} cascade; drop schema if exists ${small} cascade`).catch(() => {})
    await db.close()
  }
}

await main()
