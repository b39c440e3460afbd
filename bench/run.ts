import { mkdirSync, writeFileSync } from 'node:fs'
import { fork } from 'node:child_process'
import http from 'node:http'
import { cpus, totalmem } from 'node:os'
import pg from 'pg'
import { projectPath } from '../libs/shared/paths.js'
import { client, closedLoop, percentile, round, type LoadResult } from './lib/load.js'
import { metric, startRole } from './lib/procs.js'

// npm run bench: measures a writer and a reader process on this machine's PostgreSQL and Redis,
// with the load generator on the same machine (2 cores shared by client and server). Prints the
// figures and writes them to bench/results/. Settings: BENCH_SECONDS (default 8), BENCH_POLLERS
// (default 19500), DATABASE_URL / REDIS_URL (default the local services).

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test'
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8)
// @NOTE this sandbox caps open files at 20,000 per process (hard limit, not raisable): the reader needs one per
// poller plus its own connections, so 19,500 is the most one reader process can hold here
const MAX_POLLERS = Number(process.env.BENCH_POLLERS ?? 19500)
const schema = `bench_${Date.now()}`
const unlimited = { READ_RATE_LIMIT_MAX: '0', LONG_POLLS_PER_ADDRESS_MAX: '0', PUBLISH_ADDRESS_RATE_LIMIT_MAX: '0', NEW_IDENTITY_RATE_LIMIT_MAX: '0', HTTP_MAX_CONNECTIONS: '0' } // every client is 127.0.0.1
const env = { DATABASE_URL, REDIS_URL, WIRE_PG_SCHEMA: schema, PUBLISH_RATE_LIMIT_MAX: '1000000', WAKE_FALLBACK_POLL_MS: '60000', ...unlimited }
const body = (w: number, i: number) => JSON.stringify({ $type: 'broadcast', $tags: ['bench', `w${w % 8}`], text: `signal ${i} from worker ${w}`, n: i })
const auth = (w: number) => ({ authorization: `Bearer bench-agent-${w}-token` })
const log = (s: string) => process.stdout.write(s + '\n')

/** CPU seconds a process spent (user + system) per operation, from its own /metrics. */
const cpuOf = (url: string) => metric(url, 'process_cpu_seconds_total')

async function publishes(maxBatch: number, port: number): Promise<LoadResult & { batch: number; writerCpuMsPer: number }> {
  const writer = await startRole('writer', port, { ...env, PUBLISH_MAX_BATCH: String(maxBatch) })
  const c = client(writer.url, 256)
  const op = async (w: number, i: number) => (await c.request('POST', '/sw/signals', body(w, i), auth(w))).status === 200
  await closedLoop(64, 1, op) // warm-up
  const cpu0 = await cpuOf(writer.url)
  const r = await closedLoop(64, SECONDS, op)
  const writerCpuMsPer = round(((await cpuOf(writer.url)) - cpu0) * 1000 / Math.max(1, r.ok), 3)
  const batch = (await metric(writer.url, 'wire_batch_size_sum')) / Math.max(1, await metric(writer.url, 'wire_batch_size_count'))
  c.close()
  await writer.stop()
  return { ...r, batch: round(batch, 1), writerCpuMsPer }
}

async function reads(reader: string, path: string): Promise<LoadResult & { readerCpuMsPer: number }> {
  const c = client(reader, 128)
  const op = async () => (await c.request('GET', path)).status === 200
  await closedLoop(64, 1, op)
  const cpu0 = await cpuOf(reader)
  const r = await closedLoop(64, SECONDS, op)
  const readerCpuMsPer = round(((await cpuOf(reader)) - cpu0) * 1000 / Math.max(1, r.ok), 3)
  c.close()
  return { ...r, readerCpuMsPer }
}

/** N long-polls waiting on one reader; one publish; how fast all are answered, what it cost the reader. */
/** Opens `n` held GETs on `url` (one keep-alive socket each, as real followers); resolves their end times. */
async function holdRequests(url: string, n: number) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity })
  const u = new URL(url)
  const done: number[] = []
  const polls: Array<Promise<void>> = []
  for (let i = 0; i < n; i++) {
    polls.push(
      new Promise<void>((resolve) => {
        const req = http.get({ host: u.hostname, port: u.port, path: u.pathname + u.search, agent }, (res) => {
          res.resume()
          res.on('end', () => (done.push(performance.now()), resolve()))
        })
        req.on('error', () => resolve())
      }),
    )
    if (i % 500 === 499) await new Promise((r) => setTimeout(r, 20)) // stay under the accept backlog
  }
  return { done, all: () => Promise.all(polls).then(() => agent.destroy()) }
}

const until = async (check: () => Promise<boolean>) => {
  for (let i = 0; i < 600 && !(await check()); i++) await new Promise((r) => setTimeout(r, 100))
}

/** The same fan-out on a bare node:http server (bench/lib/raw-server.ts): what this machine allows. */
async function rawFloor(n: number, port: number) {
  const child = fork(projectPath('dist/bench/lib/raw-server.js'), [String(port)])
  await new Promise((r) => child.once('message', r))
  const base = `http://127.0.0.1:${port}`
  const held = await holdRequests(`${base}/hold`, n)
  await until(async () => Number(await (await fetch(`${base}/count`)).text()) >= n)
  const t0 = performance.now()
  const serverMs = Number(await (await fetch(`${base}/release`, { method: 'POST' })).text())
  await held.all()
  child.kill('SIGTERM')
  const lat = held.done.map((t) => t - t0).sort((a, b) => a - b)
  return { pollers: n, p50: round(percentile(lat, 50)), p99: round(percentile(lat, 99)), serverMs: round(serverMs) }
}

async function fanOut(reader: string, writer: string, n: number) {
  const { nextCursor } = (await (await fetch(`${reader}/sw/signals?limit=1`)).json()) as { nextCursor: number }
  const rssBefore = await metric(reader, 'process_resident_memory_bytes')
  const heapBefore = await metric(reader, 'nodejs_heap_size_used_bytes')
  const held = await holdRequests(`${reader}/sw/signals?cursor=${nextCursor}&wait=25`, n)
  const done = held.done
  await until(async () => (await metric(reader, 'wire_waiting_pollers')) >= n)
  const waiting = await metric(reader, 'wire_waiting_pollers')
  const rss = await metric(reader, 'process_resident_memory_bytes')
  const heap = await metric(reader, 'nodejs_heap_size_used_bytes')
  const f0 = await metric(reader, 'wire_wake_fanout_seconds_sum')
  const q0 = await metric(reader, 'wire_feed_queries_total')
  const w0 = await metric(reader, 'wire_feed_wakes_total', 'source="bus"')
  const res = await fetch(`${writer}/sw/signals`, { method: 'POST', headers: { ...auth(0), 'content-type': 'application/json' }, body: body(0, -1) })
  const acked = performance.now()
  if (res.status !== 200) throw new Error(`publish answered ${res.status}`)
  await held.all()
  const serverMs = round(((await metric(reader, 'wire_wake_fanout_seconds_sum')) - f0) * 1000)
  const q1 = await metric(reader, 'wire_feed_queries_total')
  const w1 = await metric(reader, 'wire_feed_wakes_total', 'source="bus"')
  const lat = done.map((t) => t - acked).sort((a, b) => a - b)
  return {
    pollers: n,
    waiting,
    answered: done.length,
    p50: round(percentile(lat, 50)),
    p99: round(percentile(lat, 99)),
    max: round(lat.at(-1) ?? 0),
    serverMs,
    queriesPerWake: round((q1 - q0) / Math.max(1, w1 - w0), 2),
    wakes: w1 - w0,
    rssPerPollerKB: round((rss - rssBefore) / n / 1024, 2),
    heapPerPollerKB: round((heap - heapBefore) / n / 1024, 2),
  }
}

async function sql(text: string) {
  const c = new pg.Client({ connectionString: DATABASE_URL })
  await c.connect()
  try {
    await c.query(text)
  } finally {
    await c.end()
  }
}

async function main() {
  const started = new Date().toISOString()
  log(`wire bench ${started}: ${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB, ${SECONDS} s per run, schema ${schema}`)
  const results: Record<string, unknown> = { started, cores: cpus().length, seconds: SECONDS, node: process.version }
  try {
    const grouped = await publishes(500, 4601)
    log(`publish, group commit:          ${grouped.perSecond}/s  p50 ${grouped.p50} ms  p99 ${grouped.p99} ms  (avg batch ${grouped.batch}; writer CPU ${grouped.writerCpuMsPer} ms per publish)`)
    const single = await publishes(1, 4602)
    log(`publish, one commit per signal: ${single.perSecond}/s  p50 ${single.p50} ms  p99 ${single.p99} ms  (avg batch ${single.batch}; writer CPU ${single.writerCpuMsPer} ms per publish)`)
    results.publish = { groupCommit: grouped, commitPerSignal: single }

    // @NOTE no ANALYZE: a real board's first minutes have no table statistics either, and every
    // page query is bounded by its seq window whatever the planner knows (docs/architecture.md)
    const writer = await startRole('writer', 4603, env)
    const reader = await startRole('reader', 4604, env)
    const dbReader = await startRole('reader', 4605, { ...env, READER_TAIL_SIZE: '0' })
    const readResults: Record<string, LoadResult & { readerCpuMsPer: number }> = {}
    for (const [name, url, path] of [
      ['newest 100, from the tail', reader.url, '/sw/signals'],
      ['newest 100, READER_TAIL_SIZE=0 (SQL)', dbReader.url, '/sw/signals'],
      ['newest 10, from the tail', reader.url, '/sw/signals?limit=10'],
      ['newest 10, READER_TAIL_SIZE=0 (SQL)', dbReader.url, '/sw/signals?limit=10'],
    ] as const) {
      readResults[name] = await reads(url, path)
      const rr = readResults[name]!
      log(`read ${name}: ${rr.perSecond}/s  p50 ${rr.p50} ms  p99 ${rr.p99} ms  (reader CPU ${rr.readerCpuMsPer} ms per read)`)
    }
    results.reads = readResults
    await dbReader.stop()

    const fan = []
    for (const n of [1, 1000, 10000, MAX_POLLERS].filter((x, i, a) => x <= MAX_POLLERS && a.indexOf(x) === i)) {
      const r = await fanOut(reader.url, writer.url, n)
      fan.push(r)
      log(`long-poll fan-out ${n}: answered ${r.answered}/${r.waiting} waiting; ack→response p50 ${r.p50} ms p99 ${r.p99} ms max ${r.max} ms (reader answered all in ${r.serverMs} ms); ` +
        `${r.queriesPerWake} queries per wake; ${r.rssPerPollerKB} KB RSS (${r.heapPerPollerKB} KB heap) per waiting poller`)
    }
    results.fanOut = fan
    const floor = []
    for (const n of [1000, 10000, MAX_POLLERS].filter((x, i, a) => x <= MAX_POLLERS && a.indexOf(x) === i)) {
      const r = await rawFloor(n, 4606)
      floor.push(r)
      log(`bare node:http fan-out ${n} (the machine's floor): p50 ${r.p50} ms p99 ${r.p99} ms (server answered all in ${r.serverMs} ms)`)
    }
    results.rawFloor = floor
    await Promise.all([writer.stop(), reader.stop()])
  } finally {
    await sql(`drop schema if exists "${schema}" cascade`)
  }
  mkdirSync(projectPath('bench/results'), { recursive: true })
  const file = projectPath(`bench/results/${started.replace(/[:.]/g, '-')}.json`)
  writeFileSync(file, JSON.stringify(results, null, 2) + '\n')
  writeFileSync(projectPath('bench/results/latest.json'), JSON.stringify(results, null, 2) + '\n')
  log(`written to ${file}`)
}

await main()
