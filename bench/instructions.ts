import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs'
import { cpus, loadavg } from 'node:os'
import { setTimeout as sleep } from 'node:timers/promises'
import { bossSchemaName } from '../libs/shared/db/index.js'
import { projectPath } from '../libs/shared/paths.js'
import { startUnderCallgrind, type CallgrindProc } from './lib/callgrind.js'
import { getLoop, publishRounds } from './lib/fixed-load.js'
import { round } from './lib/load.js'
import { holdPollers } from './lib/pollers.js'
import { metric } from './lib/procs.js'
import { sqlOn } from './lib/sql.js'

// npm run bench:instructions: the instructions the server process executes per operation, counted by
// valgrind's callgrind (the same count twice whatever else the machine runs, unlike its seconds).
// The single process on PostgreSQL (npm start's shape) and the fleet's writer each run under callgrind
// and are given a fixed workload, phase by phase; a phase's figure is
//   (instructions counted during the phase - the idle rate x the phase's length) / its operations,
// the idle rate being what the same process counts per second doing nothing, measured first.
// Phases: publishes (BENCH_PUBLISHES, in rounds of BENCH_BATCH sent at once: the batch shape), then on the
// single process head polls (cursor=head&wait=0), newest-page reads (100 signals) and fan-out answers
// (BENCH_FOLLOWERS long-polls at the head, BENCH_FANOUT_ROUNDS publishes). Every phase runs once unmeasured
// first (V8 compiles the path; the publishes BENCH_WARMUPS times and the fan-out BENCH_FANOUT_WARMUPS rounds,
// default 1 each), then measured. BENCH_PUBLISH_KEYED=1: every publish with an Idempotency-Key of its
// own. BENCH_BEFORE=<another checkout, built>: both builds in turn, BENCH_REPEAT times (default 2:
// the spread shows the count's stability). BENCH_CALLGRIND_KEEP=<dir>:
// keeps each phase's callgrind file there, with the JIT's function names (node --perf-basic-prof)
// for `callgrind_annotate` (bench/results/instructions.md).

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test'
const sql = sqlOn(DATABASE_URL)
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'
const num = (name: string, d: number) => Number(process.env[name] ?? d)
const PUBLISHES = num('BENCH_PUBLISHES', 1024)
const BATCH = num('BENCH_BATCH', 32)
const HEAD_POLLS = num('BENCH_HEAD_POLLS', 2000)
const PAGES = num('BENCH_PAGES', 500)
const FOLLOWERS = num('BENCH_FOLLOWERS', 200)
const FANOUT_ROUNDS = num('BENCH_FANOUT_ROUNDS', 3)
const FANOUT_WARMUPS = num('BENCH_FANOUT_WARMUPS', 1)
const IDLE_S = num('BENCH_IDLE_SECONDS', 10)
const REPEAT = num('BENCH_REPEAT', 2)
const WARMUPS = num('BENCH_WARMUPS', 1)
const ROLES = (process.env.BENCH_ROLES ?? 'server,writer').split(',') as Array<'server' | 'writer'>
const KEEP = process.env.BENCH_CALLGRIND_KEEP
/** BENCH_PUBLISH_KEYED=1: the publishes (warm-up and measured) each with an Idempotency-Key never used before. */
const KEYED = process.env.BENCH_PUBLISH_KEYED === '1'
const BUILDS: Array<[string, string | undefined]> = process.env.BENCH_BEFORE
  ? [
      ['before', process.env.BENCH_BEFORE],
      ['after', undefined],
    ]
  : [['this build', undefined]]
const schema = `bench_${Date.now()}`
// as npm run bench: every client is 127.0.0.1, so the per-address budgets are off; the per-identity rate limit stays on (Redis), raised out of the way
const env = {
  DATABASE_URL,
  REDIS_URL,
  WIRE_PG_SCHEMA: schema,
  PUBLISH_RATE_LIMIT_MAX: '1000000',
  WAKE_FALLBACK_POLL_MS: '60000',
  READ_RATE_LIMIT_MAX: '0',
  LONG_POLLS_PER_ADDRESS_MAX: '0',
  PUBLISH_ADDRESS_RATE_LIMIT_MAX: '0',
  PUBLISH_ATTEMPT_RATE_LIMIT_MAX: '0',
  NEW_IDENTITY_RATE_LIMIT_MAX: '0',
  HTTP_MAX_CONNECTIONS: '0',
  // the idle collection starts when a quiet second follows growth: when, depends on time, not on the operations
  IDLE_GC_INTERVAL_MS: '0',
  // under callgrind the event loop runs ~50x slower: its delay would shed the load as overload
  SHED_EVENT_LOOP_DELAY_MS: '0',
}
const log = (s: string) => process.stdout.write(`${s}\n`)
/** The roles under callgrind now: stopped with the bench (valgrind would outlive it). */
const running = new Set<CallgrindProc>()
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.once(signal, () => {
    for (const p of running) p.child.kill('SIGKILL')
    process.exit(130)
  })
let port = 4900 + Math.floor(Math.random() * 200)

interface Phase {
  operations: number
  /** Instructions counted during the phase, all threads. */
  instructions: number
  seconds: number
  /** The idle rate's share of them, subtracted. */
  idle: number
  perOperation: number
  /** Publishes per group commit during the phase (publish phases). */
  avgBatch?: number
}

/** Runs `work` between a zero and a dump of the counters; its figure net of the idle rate. */
async function phase(
  p: CallgrindProc,
  name: string,
  operations: number,
  idlePerSecond: number,
  work: () => Promise<void>,
  tag: string,
): Promise<Phase> {
  const b0 = [await metric(p.url, 'wire_batch_size_sum'), await metric(p.url, 'wire_batch_size_count')]
  await p.collect()
  await p.zero()
  const t0 = performance.now()
  await work()
  const seconds = (performance.now() - t0) / 1000
  const { instructions, file } = await p.dump(name)
  if (KEEP) copyFileSync(file, `${KEEP}/${tag}-${name}.callgrind`)
  const idle = Math.round(idlePerSecond * seconds)
  const batches = (await metric(p.url, 'wire_batch_size_count')) - b0[1]!
  const avgBatch = batches > 0 ? round(((await metric(p.url, 'wire_batch_size_sum')) - b0[0]!) / batches, 1) : undefined
  return {
    operations,
    instructions,
    seconds: round(seconds, 1),
    idle,
    perOperation: Math.round((instructions - idle) / operations),
    ...(avgBatch !== undefined && { avgBatch }),
  }
}

async function measure(role: 'server' | 'writer', build: string | undefined, tag: string): Promise<Record<string, Phase>> {
  const nodeArgs = KEEP ? ['--perf-basic-prof'] : []
  const t = performance.now()
  const p = await startUnderCallgrind(role, port++, env, build, nodeArgs)
  running.add(p)
  log(`${tag}: started under callgrind in ${round((performance.now() - t) / 1000, 1)} s`)
  const out: Record<string, Phase> = {}
  try {
    // unmeasured: V8 compiles the path; the board gets signals to read. A first connection to PostgreSQL may
    // outlast the pool's 3 s connect timeout while the process is still compiling under callgrind (503): again
    for (let tries = 1; ; tries++)
      try {
        for (let i = 0; i < WARMUPS; i++) await publishRounds(p.url, PUBLISHES, BATCH, { keyed: KEYED })
        break
      } catch (err) {
        if (tries === 3) throw err
        log(`${tag}: warm-up: ${(err as Error).message}; again`)
      }
    // what the process counts doing nothing (timers, the sweeper, the bus), per second
    await p.collect()
    await p.zero()
    const t0 = performance.now()
    await sleep(IDLE_S * 1000)
    const idle = await p.dump('idle')
    const idlePerSecond = idle.instructions / ((performance.now() - t0) / 1000)
    out.publish = await phase(p, 'publish', PUBLISHES, idlePerSecond, () => publishRounds(p.url, PUBLISHES, BATCH, { keyed: KEYED }), tag)
    if (role === 'server') {
      const head = ((await (await fetch(`${p.url}/sw/signals?limit=1`)).json()) as { nextCursor: number }).nextCursor
      const headPath = `/sw/signals?cursor=${head}&wait=0`
      // a phase of 0 operations is left out
      if (HEAD_POLLS > 0) {
        await getLoop(p.url, headPath, HEAD_POLLS / 4, 16)
        out.headPoll = await phase(p, 'head-poll', HEAD_POLLS, idlePerSecond, () => getLoop(p.url, headPath, HEAD_POLLS, 16), tag)
      }
      if (PAGES > 0) {
        await getLoop(p.url, '/sw/signals', PAGES / 4, 16)
        out.newestPage = await phase(p, 'newest-page', PAGES, idlePerSecond, () => getLoop(p.url, '/sw/signals', PAGES, 16), tag)
      }
      if (FOLLOWERS > 0 && FANOUT_ROUNDS > 0) out.fanOut = await fanOut(p, idlePerSecond, tag)
    }
    return out
  } finally {
    running.delete(p)
    await p.stop()
  }
}

/** FOLLOWERS long-polls wait at the head; FANOUT_WARMUPS unmeasured rounds, then FANOUT_ROUNDS publishes, each answered to every follower. */
async function fanOut(p: CallgrindProc, idlePerSecond: number, tag: string): Promise<Phase> {
  const body = JSON.stringify({ $type: 'broadcast', $tags: ['bench'], text: 'fan-out' })
  const publish = async () => {
    const res = await fetch(`${p.url}/sw/signals`, {
      method: 'POST',
      headers: { authorization: 'Bearer bench-fan-out-token', 'content-type': 'application/json' },
      body,
    })
    if (res.status !== 200) throw new Error(`publish answered ${res.status}`)
  }
  const head = ((await (await fetch(`${p.url}/sw/signals?limit=1`)).json()) as { nextCursor: number }).nextCursor
  const followers = await holdPollers(p.url, FOLLOWERS, head)
  const waiting = async () => ((await (await fetch(`${p.url}/readyz`)).json()) as { waiting: number }).waiting
  const until = async (check: () => Promise<boolean>) => {
    for (let i = 0; !(await check()); i++) {
      if (i > 1200) throw new Error('fan-out: followers not answered or not waiting again')
      await sleep(100)
    }
  }
  const roundOf = async () => {
    const before = (await followers.report()).answered
    await publish()
    let answered = before
    await until(async () => ((answered = (await followers.report()).answered), answered >= before + FOLLOWERS))
    await until(async () => (await waiting()) >= FOLLOWERS)
    return answered - before
  }
  try {
    await until(async () => (await waiting()) >= FOLLOWERS)
    for (let i = 0; i < FANOUT_WARMUPS; i++) await roundOf()
    let answers = 0
    const r = await phase(
      p,
      'fan-out',
      1,
      idlePerSecond,
      async () => {
        for (let i = 0; i < FANOUT_ROUNDS; i++) answers += await roundOf()
      },
      tag,
    )
    return { ...r, operations: answers, perOperation: Math.round((r.instructions - r.idle) / answers) }
  } finally {
    await followers.stop()
  }
}

const fmt = (n: number) => n.toLocaleString('en-US')

async function main() {
  const started = new Date().toISOString()
  log(
    `wire bench:instructions ${started}: ${cpus().length} cores, load ${loadavg()[0]!.toFixed(1)}, node ${process.version}; ${PUBLISHES} publishes${KEYED ? ' (each with a new Idempotency-Key)' : ''} in rounds of ${BATCH}, ${HEAD_POLLS} head polls, ${PAGES} newest pages, ${FOLLOWERS} followers x ${FANOUT_ROUNDS} publishes; builds: ${BUILDS.map((b) => b[0]).join(', ')}`,
  )
  if (KEEP) mkdirSync(KEEP, { recursive: true })
  const results: Record<string, Record<string, Array<Record<string, Phase>>>> = {}
  try {
    for (let i = 0; i < REPEAT; i++)
      for (const role of ROLES)
        for (const [name, build] of BUILDS) {
          const r = await measure(role, build, `${name.replace(/ /g, '-')}-${role}-${i + 1}`)
          ;((results[role] ??= {})[name] ??= []).push(r)
          log(
            `${role} [${name}] ${Object.entries(r)
              .map(
                ([k, v]) =>
                  `${k} ${fmt(v.perOperation)} instructions/op (${fmt(v.operations)} ops, ${fmt(v.instructions)} counted, idle ${fmt(v.idle)}, ${v.seconds} s${v.avgBatch ? `, avg batch ${v.avgBatch}` : ''})`,
              )
              .join('; ')}`,
          )
        }
  } finally {
    await sql(`drop schema if exists "${schema}" cascade`)
    await sql(`drop schema if exists "${bossSchemaName(schema)}" cascade`)
  }
  // per role and phase: each build's runs, and after / before
  log('\ninstructions per operation (each run)')
  for (const [role, byBuild] of Object.entries(results)) {
    const phases = Object.keys(Object.values(byBuild)[0]![0]!)
    for (const ph of phases) {
      const runs = Object.entries(byBuild).map(([b, rs]) => [b, rs.map((r) => r[ph]!.perOperation)] as const)
      const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length
      const spread = (xs: readonly number[]) =>
        xs.length > 1 ? ` (spread ${round(((Math.max(...xs) - Math.min(...xs)) / mean(xs)) * 100, 1)} %)` : ''
      const ratio = runs.length === 2 ? `; after/before ${round(mean(runs[1]![1]) / mean(runs[0]![1]), 3)}` : ''
      log(`  ${role} ${ph}: ${runs.map(([b, xs]) => `${b} ${xs.map(fmt).join(', ')}${spread(xs)}`).join('; ')}${ratio}`)
    }
  }
  mkdirSync(projectPath('bench/results'), { recursive: true })
  const file = projectPath(`bench/results/instructions-${started.replace(/[:.]/g, '-')}.json`)
  writeFileSync(
    file,
    `${JSON.stringify({ started, node: process.version, publishes: PUBLISHES, batch: BATCH, headPolls: HEAD_POLLS, pages: PAGES, followers: FOLLOWERS, fanOutRounds: FANOUT_ROUNDS, results }, null, 2)}\n`,
  )
  log(`written to ${file}`)
}

await main()
