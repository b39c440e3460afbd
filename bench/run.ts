import { mkdirSync, writeFileSync } from 'node:fs'
import { cpus, loadavg, totalmem } from 'node:os'
import { bossSchemaName } from '../libs/shared/db/index.js'
import { projectPath } from '../libs/shared/paths.js'
import { fanOut, type FanOutResult } from './lib/fan-out.js'
import { startFront } from './lib/front.js'
import { round } from './lib/load.js'
import { metric, startRole, type RoleProc } from './lib/procs.js'
import { steadyFanOut, TRACK_KEY, type SteadyResult } from './lib/steady.js'
import { wrk } from './lib/wrk.js'
import { sqlOn } from './lib/sql.js'

// npm run bench: writers and readers of the built code on this machine's PostgreSQL and Redis, loaded by
// clients cheaper than the server (wrk; bench/lib/pollers.ts for long-polls). Every figure comes with
// the CPU the server process spent per operation (robust on a shared machine) and the client's own
// CPU (to say when the client, not the server, was the limit). With BENCH_BEFORE=<another checkout,
// built>, every measurement runs on both builds in turn, in the same run. Prints the figures and writes
// them to bench/results/. Settings: BENCH_SECONDS (default 8), BENCH_POLLERS (default 5000,20000),
// BENCH_ROUNDS (fan-out publishes, default 10), BENCH_REPEAT (default 2), BENCH_ONLY (publish, reads,
// fanout or steady: one part), BENCH_BUDGETS=1 (fan-out with the per-address budgets at their defaults,
// each follower its own client address through X-Forwarded-For), BENCH_PUBLISH_KEYED=1 (publish: each
// with an Idempotency-Key never used before), DATABASE_URL, REDIS_URL.
// steady (not in the default run): BENCH_POLLERS followers on BENCH_READERS readers (default 1; 2 is the
// fleet shape: GETs to the readers, POSTs to the writer, wake-ups through Redis) while BENCH_SIGNALS
// (default 200) signals are published at BENCH_RATE per second (default 20); missed pairs and
// per-signal delivery latency, and RSS per waiting poller right after the followers connected and
// held (once each reader's own idle collection ran with them waiting; bench/lib/steady.ts). BENCH_READER_NODE_OPTIONS: NODE_OPTIONS for the
// fan-out's readers of this build (with BENCH_BEFORE, of the build after only), e.g.
// --max-semi-space-size=16 to measure a reader with a smaller young generation against one without.
// BENCH_FRONT=nginx (steady): the followers and the publishes go through nginx with deploy/nginx's fleet
// recipe (GETs to the readers, POSTs to the writer; bench/lib/front.ts), as in production; with
// BENCH_BUDGETS each follower's own X-Forwarded-For is passed through and nginx appends its own, so the
// readers trust two hops (TRUST_PROXY=2: a load balancer and nginx). BENCH_TAIL_DETAIL=1 (steady): which
// signals hold the slowest pairs (bench/lib/steady.ts, tailDetail). BENCH_STEADY_SINGLE=1 (steady): one
// single process (npm start's shape, writer and reader at once) instead of a writer and BENCH_READERS readers.

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test'
const sql = sqlOn(DATABASE_URL)
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8)
const POLLERS = (process.env.BENCH_POLLERS ?? '5000,20000').split(',').map(Number)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 10)
const REPEAT = Number(process.env.BENCH_REPEAT ?? 2)
const ONLY = process.env.BENCH_ONLY
const part = (name: 'publish' | 'reads' | 'fanout' | 'steady') => (name === 'steady' ? ONLY === name : !ONLY || ONLY === name)
const STEADY = {
  readers: Number(process.env.BENCH_READERS ?? 1),
  signals: Number(process.env.BENCH_SIGNALS ?? 200),
  rate: Number(process.env.BENCH_RATE ?? 20),
}
// @NOTE this sandbox caps open files near 20,000 per process: a reader holds at most this many pollers here
const PER_READER = 10_000
const BUILDS: Array<[string, string | undefined]> = process.env.BENCH_BEFORE
  ? [
      ['before', process.env.BENCH_BEFORE],
      ['after', undefined],
    ]
  : [['this build', undefined]]
const schema = `bench_${Date.now()}`
// every client here is 127.0.0.1: the per-address budgets and the connection cap would measure themselves
const unlimited = {
  READ_RATE_LIMIT_MAX: '0',
  LONG_POLLS_PER_ADDRESS_MAX: '0',
  PUBLISH_ADDRESS_RATE_LIMIT_MAX: '0',
  PUBLISH_ATTEMPT_RATE_LIMIT_MAX: '0',
  NEW_IDENTITY_RATE_LIMIT_MAX: '0',
  HTTP_MAX_CONNECTIONS: '0',
}
// the per-identity rate limit stays on (through Redis), raised out of the way
const env = {
  DATABASE_URL,
  REDIS_URL,
  WIRE_PG_SCHEMA: schema,
  PUBLISH_RATE_LIMIT_MAX: '1000000',
  WAKE_FALLBACK_POLL_MS: '60000',
  ...unlimited,
}
const BUDGETS = process.env.BENCH_BUDGETS === '1'
/** BENCH_PUBLISH_KEYED=1 (publish): every publish carries an Idempotency-Key of its own (bench/wrk/publish-keyed.lua). */
const KEYED = process.env.BENCH_PUBLISH_KEYED === '1'
const FRONT = process.env.BENCH_FRONT === 'nginx'
const SINGLE = process.env.BENCH_STEADY_SINGLE === '1'
if (process.env.BENCH_FRONT && !FRONT) throw new Error(`BENCH_FRONT=${process.env.BENCH_FRONT}: only nginx is known`)
// readers in the fan-out: with BENCH_BUDGETS, every poll spends its follower's read budget and long-poll slot,
// keyed on the follower's own X-Forwarded-For: one hop trusted, or two behind the front (a load balancer's, then nginx's)
const readerEnv: Record<string, string> = BUDGETS
  ? Object.fromEntries([
      ...Object.entries(env).filter(([k]) => k !== 'READ_RATE_LIMIT_MAX' && k !== 'LONG_POLLS_PER_ADDRESS_MAX'),
      ['TRUST_PROXY', FRONT ? '2' : '1'],
    ])
  : env
/** BENCH_NGINX_KEEPALIVE: the front's idle connections kept to the readers per worker, instead of the recipe's. */
const NGINX_KEEPALIVE = process.env.BENCH_NGINX_KEEPALIVE
const READER_NODE_OPTIONS = process.env.BENCH_READER_NODE_OPTIONS
/** The readers' environment for `build`: BENCH_READER_NODE_OPTIONS goes to this build's readers only, never to BENCH_BEFORE's. */
const readerEnvOf = (build: string | undefined) =>
  READER_NODE_OPTIONS && build === undefined ? { ...readerEnv, NODE_OPTIONS: READER_NODE_OPTIONS } : readerEnv
const log = (s: string) => process.stdout.write(`${s}\n`)
let port = 4700 + Math.floor(Math.random() * 200)

/** A wrk run with the server's CPU per request from its own process_cpu_seconds_total. */
async function measured(server: RoleProc, script: string, connections: number, args: string[] = []) {
  await wrk(server.url, script, { seconds: 1, connections, args }) // warm-up
  const b0 = [await metric(server.url, 'wire_batch_size_sum'), await metric(server.url, 'wire_batch_size_count')]
  const cpu0 = server.cpuSeconds()
  const r = await wrk(server.url, script, { seconds: SECONDS, connections, args })
  const cpu = server.cpuSeconds() - cpu0
  const batches = (await metric(server.url, 'wire_batch_size_count')) - b0[1]!
  const ok = Math.max(1, r.requests - r.non2xx)
  return {
    ...r,
    serverMsPer: round((cpu * 1000) / ok, 4),
    clientMsPer: round(r.clientCpuMs / ok, 4),
    clientCores: round(r.clientCpuMs / 1000 / SECONDS, 2),
    ...(batches > 0 && { avgBatch: round(((await metric(server.url, 'wire_batch_size_sum')) - b0[0]!) / batches, 1) }),
  }
}
type Measured = Awaited<ReturnType<typeof measured>>

const line = (name: string, r: Measured) =>
  `${name}: ${r.perSecond}/s p50 ${r.p50} ms p99 ${r.p99} ms${r.non2xx ? ` (${r.non2xx} not 2xx!)` : ''}; server CPU ${r.serverMsPer} ms/op` +
  `${r.avgBatch ? ` (avg batch ${r.avgBatch})` : ''}; client (wrk) ${r.clientMsPer} ms/op, ${r.clientCores} cores${r.clientCores > 0.85 ? ' — CLIENT SATURATED' : ''}`

async function publishes(build: string | undefined, role: 'writer' | 'server') {
  const server = await startRole(role, port++, env, build)
  try {
    return await measured(server, KEYED ? 'publish-keyed.lua' : 'publish.lua', 64)
  } finally {
    await server.stop()
  }
}

async function reads(build: string | undefined) {
  const writer = await startRole('writer', port++, env, build)
  const reader = await startRole('reader', port++, env, build)
  try {
    await wrk(writer.url, 'publish.lua', { seconds: 2, connections: 8 }) // a few thousand signals to read
    const head = ((await (await fetch(`${reader.url}/sw/signals?limit=1`)).json()) as { nextCursor: number }).nextCursor
    return {
      newest100: await measured(reader, 'read.lua', 64, ['/sw/signals']),
      headPoll: await measured(reader, 'read.lua', 64, [`/sw/signals?cursor=${head}&wait=0`]),
    }
  } finally {
    await Promise.all([writer.stop(), reader.stop()])
  }
}

async function fanOuts(build: string | undefined, n: number): Promise<FanOutResult> {
  const writer = await startRole('writer', port++, env, build)
  const readers = await Promise.all(
    Array.from({ length: Math.ceil(n / PER_READER) }, () => startRole('reader', port++, readerEnvOf(build), build)),
  )
  const body = JSON.stringify({ $type: 'broadcast', $tags: ['bench'], text: 'fan-out' })
  const publish = async () => {
    const res = await fetch(`${writer.url}/sw/signals`, {
      method: 'POST',
      headers: { authorization: 'Bearer bench-fan-out-token', 'content-type': 'application/json' },
      body,
    })
    if (res.status !== 200) throw new Error(`publish answered ${res.status}`)
  }
  try {
    await publish()
    return await fanOut(readers, n, ROUNDS, publish, { forwarded: BUDGETS })
  } finally {
    await Promise.all([writer.stop(), ...(SINGLE ? [] : readers.map((r) => r.stop()))])
  }
}

async function steady(build: string | undefined, n: number): Promise<SteadyResult> {
  if (SINGLE && FRONT) throw new Error('BENCH_STEADY_SINGLE: no front')
  // the single process (npm start's shape) is writer and reader at once, and measured as the reader
  const writer = await startRole(
    SINGLE ? 'server' : 'writer',
    port++,
    SINGLE ? readerEnvOf(build) : FRONT ? { ...env, TRUST_PROXY: '1' } : env,
    build,
  )
  const readers = SINGLE
    ? [writer]
    : await Promise.all(Array.from({ length: STEADY.readers }, () => startRole('reader', port++, readerEnvOf(build), build)))
  const front = FRONT
    ? await startFront(
        port++,
        { writers: [Number(new URL(writer.url).port)], readers: readers.map((r) => Number(new URL(r.url).port)), unused: port++ },
        { ...(NGINX_KEEPALIVE && { readerKeepalive: Number(NGINX_KEEPALIVE) }) },
      )
    : undefined
  const publishTo = front?.url ?? writer.url
  const publish = async (k: number) => {
    const body = `{"$type":"broadcast","$tags":["bench"],"${TRACK_KEY}":${k}}`
    const res = await fetch(`${publishTo}/sw/signals`, {
      method: 'POST',
      headers: { authorization: 'Bearer bench-fan-out-token', 'content-type': 'application/json' },
      body,
    })
    if (res.status !== 200) throw new Error(`publish answered ${res.status}`)
  }
  try {
    await publish(-1) // the feed has a head; -1 is not tracked
    return await steadyFanOut(readers, { pollers: n, signals: STEADY.signals, rate: STEADY.rate, publish, forwarded: BUDGETS, front })
  } finally {
    await front?.stop()
    await Promise.all([writer.stop(), ...(SINGLE ? [] : readers.map((r) => r.stop()))])
  }
}

async function main() {
  const started = new Date().toISOString()
  const readerOptions = READER_NODE_OPTIONS ? `; readers of ${BUILDS[BUILDS.length - 1]![0]} with NODE_OPTIONS=${READER_NODE_OPTIONS}` : ''
  log(
    `wire bench ${started}: ${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB, load ${loadavg()[0]!.toFixed(1)}, ${SECONDS} s per run, builds: ${BUILDS.map((b) => b[0]).join(', ')}${readerOptions}`,
  )
  const results: Record<string, unknown> = {
    started,
    cores: cpus().length,
    seconds: SECONDS,
    node: process.version,
    loadAvg: loadavg()[0],
    ...(READER_NODE_OPTIONS && { readerNodeOptions: READER_NODE_OPTIONS }),
  }
  const each = async <T>(what: string, run: (build: string | undefined) => Promise<T>, show: (r: T) => string) => {
    const out: Record<string, T[]> = {}
    for (let i = 0; i < REPEAT; i++)
      for (const [name, build] of BUILDS) {
        const r = await run(build)
        ;(out[name] ??= []).push(r)
        log(`${what} [${name}] ${show(r)}`)
      }
    return out
  }
  try {
    if (part('publish')) {
      results.publishWriter = await each(
        `publish${KEYED ? ' with a new Idempotency-Key each' : ''}, writer, 64 connections`,
        (b) => publishes(b, 'writer'),
        (r) => line('', r),
      )
      results.publishServer = await each(
        `publish${KEYED ? ' with a new Idempotency-Key each' : ''}, single process, 64 connections`,
        (b) => publishes(b, 'server'),
        (r) => line('', r),
      )
    }
    if (part('reads'))
      results.reads = await each(
        'reads, 64 connections',
        reads,
        (r) => `\n  ${line('newest 100', r.newest100)}\n  ${line('head poll (wait=0)', r.headPoll)}`,
      )
    for (const n of part('fanout') ? POLLERS : [])
      results[`fanOut${n}`] = await each(
        `long-poll fan-out, ${n} pollers${BUDGETS ? ', per-address budgets on' : ''}`,
        (b) => fanOuts(b, n),
        (r) =>
          `${r.waiting}/${r.pollers} waiting, ${r.responses} responses (${r.errors} errors) over ${r.readers} reader(s), ${r.clientProcesses} client processes; reader CPU ${r.serverUsPerResponse} µs/response; ` +
          `client ${r.clientUsPerResponse} µs/response, ${r.clientCores} cores${r.clientCores > 0.85 * r.clientProcesses ? ' — CLIENT SATURATED' : ''}; machine idle ${Math.round(r.machineIdle * 100)} %` +
          `${r.machineIdle < 0.05 ? ' — MACHINE SATURATED (latency is the machine’s)' : ''}; ack→response p50 ${r.p50} ms p99 ${r.p99} ms; ${r.rssPerPollerKB} KB RSS (${r.heapPerPollerKB} KB heap) per poller; ${r.queriesPerWake} queries per wake`,
      )
    for (const n of part('steady') ? POLLERS : [])
      results[`steady${n}x${SINGLE ? 'single' : STEADY.readers}${FRONT ? 'nginx' : ''}`] = await each(
        `steady fan-out, ${n} followers on ${SINGLE ? 'one single process' : `${STEADY.readers} reader(s)`}${FRONT ? ' through nginx' : ''}, ${STEADY.signals} signals at ${STEADY.rate}/s${BUDGETS ? ', per-address budgets on' : ''}`,
        (b) => steady(b, n),
        (r) =>
          `${r.waiting}/${r.pollers} waiting; missed ${r.missed} of ${r.waiting * r.signals} pairs, ${r.duplicates} duplicates, ${r.errors} refused (${JSON.stringify(r.refusals)}); delivery p50 ${r.p50} ms p99 ${r.p99} ms max ${r.max} ms (after the first second: p50 ${r.warmP50} ms p99 ${r.warmP99} ms); ` +
          `${r.responses} responses, reader CPU ${r.serverUsPerResponse} µs/response${r.frontUsPerResponse !== undefined ? `, nginx CPU ${r.frontUsPerResponse} µs/response (errors logged: ${JSON.stringify(r.frontErrors)})` : ''}; client ${r.clientUsPerResponse} µs/response, ${r.clientCores} cores over ${r.clientProcesses} processes${r.clientCores > 0.85 * r.clientProcesses ? ' — CLIENT SATURATED' : ''}; ` +
          `machine idle ${Math.round(r.machineIdle * 100)} %${r.machineIdle < 0.05 ? ' — MACHINE SATURATED' : ''}; ${r.rssPerPollerKB} KB RSS per waiting poller (${r.rssHeldPerPollerKB ?? 'no idle collection, so no'} KB held once the reader collected; ${r.rssAfterPerPollerKB} KB after the run); ` +
          `RSS ${r.rssMB.before} MB before, peak ${r.rssMB.peak} MB, ${r.rssMB.after} MB right after, ${r.rssMB.settled ?? '(no collection)'} MB once collected; load ${loadavg()[0]!.toFixed(1)}`,
      )
  } finally {
    await sql(`drop schema if exists "${schema}" cascade`)
    await sql(`drop schema if exists "${bossSchemaName(schema)}" cascade`) // the single process's sweeper made it
  }
  mkdirSync(projectPath('bench/results'), { recursive: true })
  const file = projectPath(`bench/results/${started.replace(/[:.]/g, '-')}.json`)
  writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`)
  writeFileSync(projectPath('bench/results/latest.json'), `${JSON.stringify(results, null, 2)}\n`)
  log(`written to ${file}`)
}

await main()
