import { readFileSync } from 'node:fs'
import pg from 'pg'
import { client, closedLoop, round, type LoadResult } from './lib/load.js'
import { freePort, startRole, type RoleProc } from './lib/procs.js'

// npm run bench:identity — the identity network's verify, the call every board makes for every
// publish token it has not cached (30 s), as a process of the built code on this machine's
// PostgreSQL. IDN_TOKENS identities (1000) are registered and each derives a token for one board;
// then, for IDN_SECONDS (10) each after a 3 s warm-up, IDN_CONCURRENCY (32) keep-alive clients verify
// in a closed loop, in the same run:
//   1. master tokens, no budgets          (HMAC + one lookup by hash)
//   2. derived tokens, no budgets         (HMAC check + one lookup by id)
//   3. derived tokens, budgets on, Redis  (the defaults: per address and per identity, through Redis)
// Prints verifies/s, p50/p99 (ms), and the CPU per verify of the identity process and of its
// PostgreSQL backends (from /proc), so verifies per core = 1 / CPU per verify.
// IDN_BEFORE=<another checkout, built>: cases 1 and 2 run on its code first, then on this one's (before/after in one run).
// Settings: DATABASE_URL, REDIS_URL, IDN_TOKENS, IDN_SECONDS, IDN_CONCURRENCY. Run under `flock /tmp/bench.lock`.

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test'
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'
const TOKENS = Number(process.env.IDN_TOKENS ?? 1000)
const SECONDS = Number(process.env.IDN_SECONDS ?? 10)
const CONCURRENCY = Number(process.env.IDN_CONCURRENCY ?? 32)
const AUTHORITY = 'board.example:443'
const out = (s: string) => process.stdout.write(`${s}\n`)
const schema = `bidn_${process.pid}`

const NO_BUDGETS = {
  READ_RATE_LIMIT_MAX: '0',
  IDENTITY_VERIFY_RATE_LIMIT_MAX: '0',
  IDENTITY_CALLS_RATE_LIMIT_MAX: '0',
  SHED_EVENT_LOOP_DELAY_MS: '0',
}

const ticks = (pid: number) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const x = f.slice(f.lastIndexOf(')') + 2).split(' ')
  return (Number(x[11]) + Number(x[12])) / 100
}

/** CPU seconds of the PostgreSQL backends serving the identity process (application_name wire-identity). */
async function backendCpu(db: pg.Client): Promise<number> {
  const r = await db.query<{ pid: number }>(`select pid from pg_stat_activity where application_name = 'wire-identity'`)
  let s = 0
  for (const { pid } of r.rows)
    s += (() => {
      try {
        return ticks(pid)
      } catch {
        return 0
      }
    })()
  return s
}

async function start(env: Record<string, string>, root?: string): Promise<RoleProc> {
  return startRole(
    'identity',
    await freePort(),
    { DATABASE_URL, IDENTITY_PG_SCHEMA: schema, REGISTER_RATE_LIMIT_MAX: '0', IDENTITY_REGISTER_HOURLY_MAX: '0', ...env },
    root,
  )
}
const BEFORE = process.env.IDN_BEFORE

async function measure(name: string, proc: RoleProc, db: pg.Client, tokens: string[]): Promise<void> {
  const http = client(proc.url, CONCURRENCY)
  const body = JSON.stringify({ authority: AUTHORITY })
  const op = async (w: number, i: number) => {
    const r = await http.request('POST', '/identity/verify', body, { authorization: `Bearer ${tokens[(w * 7919 + i) % tokens.length]}` })
    return r.status === 200
  }
  await closedLoop(CONCURRENCY, 3, op) // warm-up: JIT, pool connections, prepared statements
  const cpu0 = proc.cpuSeconds()
  const pg0 = await backendCpu(db)
  const r: LoadResult = await closedLoop(CONCURRENCY, SECONDS, op)
  const cpu = proc.cpuSeconds() - cpu0
  const pgCpu = (await backendCpu(db)) - pg0
  http.close()
  const perVerify = (s: number) => round((s / r.ok) * 1e6, 1)
  out(
    `${name.padEnd(42)} ${String(r.perSecond).padStart(6)}/s  p50 ${r.p50} ms  p99 ${r.p99} ms  ` +
      `node ${perVerify(cpu)} µs/verify (${Math.round(r.ok / cpu)}/core-s)  +pg ${perVerify(pgCpu)} µs  ok ${r.ok}/${r.requests}`,
  )
}

const db = new pg.Client({ connectionString: DATABASE_URL })
await db.connect()
const procs: RoleProc[] = []
try {
  // one process registers the identities (registration is budgeted; a schema of its own for the run)
  const setup = await start({ ...NO_BUDGETS, IDENTITY_REGISTER_HOURLY_MAX: '100000000' })
  procs.push(setup)
  const http = client(setup.url, 16)
  const masters: string[] = []
  const derived: string[] = []
  for (let i = 0; i < TOKENS; i++) {
    const reg = JSON.parse((await http.request('POST', '/identity/register', '{}')).body) as { token: string }
    masters.push(reg.token)
    const d = JSON.parse(
      (
        await http.request('POST', '/identity/tokens/derive', JSON.stringify({ authority: AUTHORITY, ttl: 86400 }), {
          authorization: `Bearer ${reg.token}`,
        })
      ).body,
    ) as { token: string }
    derived.push(d.token)
  }
  http.close()
  await setup.stop()
  procs.pop()
  out(
    `identity network verify: ${TOKENS} identities, ${CONCURRENCY} clients, ${SECONDS} s each, PostgreSQL ${(await db.query<{ server_version: string }>('show server_version')).rows[0]!.server_version}`,
  )

  for (const [label, root] of [...(BEFORE ? [['before: ', BEFORE] as const] : []), [BEFORE ? 'after: ' : '', undefined] as const]) {
    const plain = await start(NO_BUDGETS, root)
    procs.push(plain)
    await measure(`${label}master tokens, no budgets`, plain, db, masters)
    await measure(`${label}derived tokens, no budgets`, plain, db, derived)
    await plain.stop()
    procs.pop()
  }

  const budgeted = await start({ REDIS_URL, SHED_EVENT_LOOP_DELAY_MS: '0' })
  procs.push(budgeted)
  await measure('derived tokens, budgets on (Redis)', budgeted, db, derived)
} finally {
  for (const p of procs) await p.stop()
  await db.query(`drop schema if exists "${schema}" cascade`)
  await db.end()
}
