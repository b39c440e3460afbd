import { execFileSync } from 'node:child_process'
import pg from 'pg'
import { HEADER, loadavg, runPhase, type AttackSettings } from './lib/attack-phase.js'
import { honestLoad } from './lib/honest-load.js'
import { freePort, startRole, type RoleProc } from './lib/procs.js'

// npm run bench:aggregator-attack — the aggregator beside hostile boards: an aggregator (a process
// of the built code, its settings at their defaults but for the few below) with BENCH_HONEST_BOARDS
// honest boards and their honest clients (bench/lib/honest-load.ts), first calm, then beside each
// attack in turn, each by a process of its own (bench/lib/attacker-proc.ts: hostile boards
// registered with the aggregator, and in a `+proxy` phase proxied requests to them), then calm
// again. For every phase, in the same run: p50/p99 of the honest clients, the aggregator's RSS,
// heap, event-loop delay and CPU per honest operation, and what the hostile boards got into the
// index (bench/lib/attack-phase.ts). BENCH_BEFORE=<checkout>: the same phases first against that
// checkout's aggregator (build it first; BENCH_BEFORE_ENV='A=1 B=2': settings of that aggregator
// only, to compare a setting in one build). One table. Run under `flock /tmp/bench.lock`.
// Settings: BENCH_PHASES (calm,huge,gzip,pinned,oversized,foreign,trickle,stall,huge+proxy,
// pinned+proxy,trickle+proxy,calm again), BENCH_PHASE_SECONDS (15), BENCH_WARMUP_SECONDS (3),
// BENCH_HONEST_BOARDS (2), BENCH_FOLLOWERS (6 per board, half with a token), BENCH_PUBLISH_PER_S
// (1.5 per board: slower than the follower's page rate, 120 a minute, so a publish never waits for
// it), BENCH_HOSTILE_BOARDS (2), BENCH_STALL_BOARDS (24, each stalling after 2 MB),
// BENCH_ATTACK_CONCURRENCY (16), BENCH_QUOTA_ROWS (2000: the pinned flood reaches it within a
// phase), BENCH_TRACE=1 (the aggregator's memory every 5 s), BENCH_AGG_ENV='A=1 B=2' (settings of
// every aggregator started), DATABASE_URL.

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test'
const num = (k: string, d: number) => Number(process.env[k] ?? d)
const SECONDS = num('BENCH_PHASE_SECONDS', 15)
const PHASES = (
  process.env.BENCH_PHASES ?? 'calm,huge,gzip,pinned,oversized,foreign,trickle,stall,huge+proxy,pinned+proxy,trickle+proxy,calm again'
).split(',')
const QUOTA = num('BENCH_QUOTA_ROWS', 2000)
const ATTACK: AttackSettings = {
  boards: num('BENCH_HOSTILE_BOARDS', 2),
  stallBoards: num('BENCH_STALL_BOARDS', 24),
  stallBytes: 2_000_000,
  concurrency: num('BENCH_ATTACK_CONCURRENCY', 16),
}
const ADMIN = 'bench-admin-token'
const out = (s: string) => process.stdout.write(`${s}\n`)
const run = `ba${process.pid}`
const open: RoleProc[] = []
const schemas: string[] = []
const NO_BUDGETS = {
  READ_RATE_LIMIT_MAX: '0',
  LONG_POLLS_PER_ADDRESS_MAX: '0',
  PUBLISH_RATE_LIMIT_MAX: '0',
  PUBLISH_ADDRESS_RATE_LIMIT_MAX: '0',
  PUBLISH_ATTEMPT_RATE_LIMIT_MAX: '0',
  NEW_IDENTITY_RATE_LIMIT_MAX: '0',
  SHED_EVENT_LOOP_DELAY_MS: '0',
}

async function role(kind: 'server' | 'aggregator', name: string, env: Record<string, string>, root?: string) {
  const port = await freePort()
  const schema = `${run}_${name}`
  schemas.push(schema)
  const p = await startRole(
    kind,
    port,
    {
      DATABASE_URL,
      [kind === 'server' ? 'WIRE_PG_SCHEMA' : 'AGGREGATOR_PG_SCHEMA']: schema,
      PUBLIC_WIRE_HOST: `127.0.0.1:${port}`,
      ...env,
    },
    root,
  )
  open.push(p)
  return { p, authority: `127.0.0.1:${port}` }
}

const commit = (dir: string) => execFileSync('git', ['-C', dir, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim()

/** `A=1 B=2` → { A: '1', B: '2' }. */
const envOf = (text = '') =>
  Object.fromEntries(
    text
      .split(/\s+/)
      .filter(Boolean)
      .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
  )

async function runBuild(
  build: string,
  boards: Array<{ p: RoleProc; authority: string }>,
  root: string | undefined,
  extra: Record<string, string>,
): Promise<string[]> {
  const { p: agg } = await role(
    'aggregator',
    `agg${open.length}`,
    {
      AGGREGATOR_ALLOW_HOSTS: '127.0.0.1',
      TRUST_PROXY: '127.0.0.1', // every client says its address; per-address budgets stay at their defaults
      SERVER_ADMIN_TOKEN: ADMIN,
      AGGREGATOR_REGISTER_RATE_LIMIT_MAX: '0', // the attacker registers fresh boards (20 an hour per identity and address by default)
      AGGREGATOR_BOARD_INDEX_ROWS_MAX: String(QUOTA),
      ...extra,
    },
    root,
  )
  for (const b of boards) {
    const r = await fetch(`${agg.url}/registry/boards`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer honest-registrant' },
      body: JSON.stringify({ url: b.p.url }),
    })
    if (r.status !== 201) throw new Error(`register: ${r.status}`)
  }
  const honest = honestLoad({
    agg: agg.url,
    boards: boards.map((b) => ({ url: b.p.url, authority: b.authority })),
    publishPerSecond: num('BENCH_PUBLISH_PER_S', 1.5),
    followers: num('BENCH_FOLLOWERS', 6),
    readers: 2,
    searchers: 2,
    thinkMs: 200,
  })
  await new Promise((r) => setTimeout(r, num('BENCH_WARMUP_SECONDS', 3) * 1000)) // every follower at its head
  // and the search index caught up with the boards (a second build's follower starts from their first signal)
  for (const end = Date.now() + 120_000; !honest.samples.indexed.some((s) => s.ms < 2000) && Date.now() < end; )
    await new Promise((r) => setTimeout(r, 200))
  const rows: string[] = []
  for (const phase of PHASES) {
    rows.push(
      await runPhase({
        build,
        agg,
        adminToken: ADMIN,
        honest,
        phase,
        seconds: SECONDS,
        attack: ATTACK,
        trace: process.env.BENCH_TRACE === '1',
        out,
      }),
    )
    out(rows.at(-1)!)
  }
  await honest.stop()
  await agg.stop()
  return rows
}

try {
  const load0 = loadavg()
  const boards = []
  for (let i = 0; i < num('BENCH_HONEST_BOARDS', 2); i++) boards.push(await role('server', `board${i}`, NO_BUDGETS))
  const before = process.env.BENCH_BEFORE
  const [aggEnv, beforeEnv] = [envOf(process.env.BENCH_AGG_ENV), envOf(process.env.BENCH_BEFORE_ENV)]
  const label = (name: string, env: Record<string, string>) => `${name}${Object.keys(env).length ? ` ${process.env.BENCH_BEFORE_ENV}` : ''}`
  const rows = [
    ...(before ? await runBuild(label(`before (${commit(before)})`, beforeEnv), boards, before, { ...aggEnv, ...beforeEnv }) : []),
    ...(await runBuild(`this (${commit('.')})`, boards, undefined, aggEnv)),
  ]
  out(
    `\naggregator attack bench, ${new Date().toISOString()}: ${boards.length} honest boards, ${num('BENCH_FOLLOWERS', 6)} followers each through the proxy (half with a token), ` +
      `${num('BENCH_PUBLISH_PER_S', 1.5)} publishes/s each, ${SECONDS} s per phase, index quota ${QUOTA} rows per board, ${ATTACK.concurrency} proxied requests at once in a +proxy phase; ` +
      `/proc/loadavg at the start ${load0}, at the end ${loadavg()} (the machine's 2 cores are shared with other engineers' test runs; the attacker, the honest clients, the boards and PostgreSQL run on them too)\n`,
  )
  out(HEADER)
  for (const r of rows) out(r)
} finally {
  for (const p of open.reverse()) await p.stop()
  const c = new pg.Client({ connectionString: DATABASE_URL })
  await c.connect()
  for (const s of schemas) for (const x of [s, `${s}_boss`]) await c.query(`drop schema if exists "${x}" cascade`)
  await c.end()
}
