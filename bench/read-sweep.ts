import { execFileSync } from 'node:child_process'
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sqlOn, untilHead } from './lib/sql.js'
import { round } from './lib/load.js'
import { metric, startRole, type RoleProc } from './lib/procs.js'
import { wrk } from './lib/wrk.js'
import { memoryDetail } from './lib/memory-detail.js'

// npm run bench:read-sweep: database reads that one URL cannot flatter. A fresh board of 60,000
// signals (seeded by SQL, never analysed) is read through GET /sw/signals by wrk with random paths:
// filter (none, tag, type, origin, q) x selectivity (100 %, 10 %, 1 %, 0.1 %) x depth (newest,
// 5,000 behind, 50,000 behind), random cursors and filter values. Per cell: requests/s, the server's
// CPU per request, its PostgreSQL backends' CPU per request (/proc) and rows the board's tables
// returned per request (seq_tup_read of pg_stat_user_tables + idx_tup_read of pg_stat_user_indexes; pg_stat_statements is not
// loaded here). Then the floor: the same logical reads as one indexed query on a plain table of the
// same size (500 tags, a (tag, seq) index) by pgbench, 32 clients, in the same run.
// Settings: BENCH_SECONDS (2 per cell), BENCH_BEFORE (another built checkout: before/after alternate), DATABASE_URL,
// BENCH_CELLS=issue (the three reads set against the floor only), BENCH_SWEEP_ROLE=reader (a reader role serves the
// sweep instead of the single process), BENCH_MEMORY_DETAIL=1 (where the server's RSS is: bench/lib/memory-detail.ts),
// BENCH_IDLE_SECONDS (15: when the second, idle RSS figure is read),
// BENCH_SERVER_NODE_ARGS (node's flags for this build's server only, never BENCH_BEFORE's, e.g. --trace-gc: its stdout
// goes to BENCH_SERVER_LOG, a file, when set).

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test'
const N = 60_000
const SECONDS = Number(process.env.BENCH_SECONDS ?? 2)
const CONNECTIONS = 32
const IDLE_SECONDS = Number(process.env.BENCH_IDLE_SECONDS ?? 15)
const ONLY_ISSUE = process.env.BENCH_CELLS === 'issue'
const ROLE = process.env.BENCH_SWEEP_ROLE === 'reader' ? 'reader' : 'server'
const out = (s: string) => process.stdout.write(`${s}\n`)
const rand = (n: number) => Math.floor(Math.random() * n)

const sql = sqlOn(DATABASE_URL)

// Each signal i: tags all, a<i%10>, b<i%100>, c<i%1000> (100 %, 10 %, 1 %, 0.1 %) and p<i%500> (the
// floor's 500 tags); type and origin: five values of 10 %, ten of 1 %, ten of 0.1 %, the rest one value;
// payload words |w.| (100 %), |x<i%10>|, |y<i%100>|, |z<i%1000>| for `q`.
const skewed = (prefix: string, i: string) =>
  `case when ${i} % 1000 < 10 then '${prefix}c' || (${i} % 1000) when ${i} % 1000 < 110 then '${prefix}b' || ((${i} % 1000 - 10) / 10)
   when ${i} % 1000 < 610 then '${prefix}a' || ((${i} % 1000 - 110) / 100) else '${prefix}rest' end`
async function seed(schema: string) {
  const hasTags = (await sql<{ t: string | null }>(`select to_regclass('${schema}.signal_tags')::text as t`))[0]!.t !== null
  // never analysed, not even by autovacuum during the run: the plans must not depend on statistics
  for (const { t } of await sql<{ t: string }>(
    `select c.oid::regclass::text as t from pg_class c where c.relnamespace = $1::regnamespace and c.relkind = 'r'`,
    [schema],
  ))
    await sql(`alter table ${t} set (autovacuum_enabled = false)`)
  await sql(`
    with ins as (
      insert into ${schema}.signals (seq, id, origin, origin_name, origin_uri, origin_verified, type, tags, payload, ref_id, ttl_seconds, created_at, expires_at)
      select i, lpad(i::text, 20, 'x'), ${skewed('o', 'i')}, null, 'sw://localhost/identities/x', true, ${skewed('t', '((i * 7) % 1000)')},
             array['all', 'a' || (i % 10), 'b' || (i % 100), 'c' || (i % 1000), 'p' || (i % 500)],
             '{"$type":"broadcast","text":"signal ' || i || ' |w.|x' || (i % 10) || '|y' || (i % 100) || '|z' || (i % 1000) || '|"}',
             null, 43200, now(), now() + interval '12 hours'
      from generate_series(1, ${N}) i returning seq, tags)
    ${hasTags ? `insert into ${schema}.signal_tags (tag, seq) select u.tag, ins.seq from ins cross join unnest(ins.tags) u(tag)` : 'select 1'}`)
  await sql(`update ${schema}.feed_head set seq = ${N}`)
}

type Filter = 'none' | 'tag' | 'type' | 'origin' | 'q'
const SELECTIVITY = ['100%', '10%', '1%', '0.1%'] as const
const DEPTH = { newest: null, '5,000 behind': 5000, '50,000 behind': 50_000 } as const

/** A random filter value of that selectivity; null when the board has none (type and origin at 100 % are "none"). */
function filterParam(f: Filter, sel: (typeof SELECTIVITY)[number]): string | null {
  const k = SELECTIVITY.indexOf(sel)
  if (f === 'none') return k === 0 ? '' : null
  if (f === 'tag') return `&tag=${['all', `a${rand(10)}`, `b${rand(100)}`, `c${rand(1000)}`][k]}`
  if (f === 'q') return `&q=${encodeURIComponent(['|w.|', `|x${rand(10)}|`, `|y${rand(100)}|`, `|z${rand(1000)}|`][k]!)}`
  if (k === 0) return null
  const p = f === 'type' ? 't' : 'o'
  return `&${f}=${[`${p}a${rand(5)}`, `${p}b${rand(10)}`, `${p}c${rand(10)}`][k - 1]}`
}

/** Cumulative CPU seconds of the PostgreSQL backends serving `schema` (found by their last query text). */
async function backendCpu(schema: string): Promise<number> {
  const pids = await sql<{ pid: number }>(`select pid from pg_stat_activity where query like $1 and pid <> pg_backend_pid()`, [
    `%${schema}%`,
  ])
  let s = 0
  for (const { pid } of pids)
    try {
      const st = readFileSync(`/proc/${pid}/stat`, 'utf8')
      const f = st.slice(st.lastIndexOf(')') + 2).split(' ')
      s += (Number(f[11]) + Number(f[12])) / 100
    } catch {}
  return s
}
const rowsRead = async (schema: string) =>
  Number(
    (
      await sql<{ n: string }>(
        `select (select coalesce(sum(seq_tup_read), 0) from pg_stat_user_tables where schemaname = $1)
          + (select coalesce(sum(idx_tup_read), 0) from pg_stat_user_indexes where schemaname = $1) as n`,
        [schema],
      )
    )[0]!.n,
  )

async function cell(server: RoleProc, schema: string, dir: string, paths: string[]) {
  const file = join(dir, 'paths.txt')
  writeFileSync(file, paths.join('\n'))
  const [cpu0, pgCpu0, rows0] = [server.cpuSeconds(), await backendCpu(schema), await rowsRead(schema)]
  const r = await wrk(server.url, 'paths.lua', { seconds: SECONDS, connections: CONNECTIONS, threads: 1, args: [file] })
  const [cpu1, pgCpu1] = [server.cpuSeconds(), await backendCpu(schema)]
  await new Promise((res) => setTimeout(res, 1100)) // idle backends flush their table counters within a second
  const rows1 = await rowsRead(schema)
  const n = Math.max(1, r.requests)
  return {
    rps: r.perSecond,
    cpuMs: round(((cpu1 - cpu0) * 1000) / n, 3),
    pgMs: round(((pgCpu1 - pgCpu0) * 1000) / n, 3),
    rows: Math.round((rows1 - rows0) / n),
    non2xx: r.non2xx,
    p99: r.p99,
  }
}

async function measure(label: string, root: string | undefined, table: Map<string, Record<string, unknown>>) {
  const schema = `bench_sweep_${Date.now()}`
  const port = 18700 + rand(50)
  const env = {
    DATABASE_URL,
    WIRE_PG_SCHEMA: schema,
    WAKE_FALLBACK_POLL_MS: '200',
    READ_RATE_LIMIT_MAX: '0',
    LONG_POLLS_PER_ADDRESS_MAX: '0',
  }
  const nodeArgs = root === undefined ? (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean) : []
  let server = await startRole('server', port, env, root, nodeArgs)
  const dir = mkdtempSync(join(tmpdir(), 'wire-sweep-'))
  try {
    await seed(schema)
    // BENCH_SWEEP_ROLE=reader: the single process made the schema; a reader role alone serves the sweep
    if (ROLE === 'reader') await server.stop(), (server = await startRole('reader', port + 1, env, root, nodeArgs))
    if (process.env.BENCH_SERVER_LOG && root === undefined)
      server.child.stdout!.on('data', (d: Buffer) => appendFileSync(process.env.BENCH_SERVER_LOG!, d))
    await untilHead(server.url, N)
    if (process.env.BENCH_MEMORY_DETAIL === '1') await memoryDetail(`${label}, before the sweep`, [server], { sample: true })
    const run = async (name: string, make: () => string | null) => {
      if (make() === null) return
      const r = await cell(server, schema, dir, Array.from({ length: 4000 }, make) as string[])
      table.set(`${name}|${label}`, r)
      out(`  ${label.padEnd(6)} ${name.padEnd(40)} ${JSON.stringify(r)}`)
    }
    // the issue's three reads, set against the floor
    await run('deep: random cursor, limit=7', () => `/sw/signals?cursor=${1 + rand(N - 1000)}&limit=7`)
    await run('sparse tag (0.2 %) newest 100', () => `/sw/signals?tag=p${rand(500)}&limit=100`)
    await run('sparse tag (0.2 %) behind, limit=20', () => `/sw/signals?tag=p${rand(500)}&cursor=${1 + rand(N - 1000)}&limit=20`)
    for (const f of ONLY_ISSUE ? [] : (['none', 'tag', 'type', 'origin', 'q'] as const))
      for (const sel of SELECTIVITY)
        for (const [depth, behind] of Object.entries(DEPTH)) {
          const cursor = () => (behind === null ? '' : `&cursor=${Math.max(0, N - behind - 2500 + rand(5000))}`)
          await run(`${f} ${sel} ${depth}`, () => {
            const p = filterParam(f, sel)
            return p === null ? null : `/sw/signals?limit=20${p}${cursor()}`
          })
        }
    if (process.env.BENCH_MEMORY_DETAIL === '1') await memoryDetail(`${label}, after the sweep`, [server], { gc: true })
    const rssLoaded = server.rssBytes()
    // a second figure beside it: the same process after IDLE_SECONDS without requests, time being what is measured here
    // (its idle collection runs once it is quiet: V8's own memory reducer never starts on Node 24, libs/shared/runtime/idle-gc.ts)
    await new Promise((r) => setTimeout(r, IDLE_SECONDS * 1000))
    if (process.env.BENCH_MEMORY_DETAIL === '1') await memoryDetail(`${label}, ${IDLE_SECONDS} s later`, [server])
    const idle = `${Math.round(server.rssBytes() / 2 ** 20)} MB ${IDLE_SECONDS} s later, idle`
    const gcs = `idle collections ${await metric(server.url, 'wire_idle_gc_total')}, ${round((await metric(server.url, 'wire_idle_gc_cpu_seconds_total')) * 1000, 1)} ms CPU`
    out(
      `  ${label}: server RSS after the sweep ${Math.round(rssLoaded / 2 ** 20)} MB (${idle}; ${gcs}); table analysed ${(await sql<{ n: string }>(`select coalesce(sum(analyze_count + autoanalyze_count), 0) as n from pg_stat_user_tables where schemaname = $1`, [schema]))[0]!.n} times`,
    )
  } finally {
    await server.stop()
    rmSync(dir, { recursive: true, force: true })
    await sql(`drop schema if exists ${schema} cascade; drop schema if exists ${schema}_boss cascade`)
  }
}

/** The floor: pgbench, 32 clients, one indexed query on a plain table of the same size. */
async function floor() {
  const schema = `bench_floor_${Date.now()}`
  await sql(`create schema ${schema};
    create table ${schema}.t (seq bigint primary key, tag text not null, payload text not null);
    insert into ${schema}.t select i, 'p' || (i % 500), '{"$type":"broadcast","text":"signal ' || i || '"}' from generate_series(1, ${N}) i;
    create index on ${schema}.t (tag, seq)`)
  const dir = mkdtempSync(join(tmpdir(), 'wire-floor-'))
  const u = new URL(DATABASE_URL)
  const scripts = {
    'deep: random cursor, limit=7': `\\set c random(1, ${N - 1000})\nselect * from ${schema}.t where seq > :c order by seq limit 7;\n`,
    'sparse tag (0.2 %) newest 100': `\\set k random(0, 499)\nselect * from ${schema}.t where tag = 'p' || :k order by seq desc limit 100;\n`,
    'sparse tag (0.2 %) behind, limit=20': `\\set k random(0, 499)\n\\set c random(1, ${N - 1000})\nselect * from ${schema}.t where tag = 'p' || :k and seq > :c order by seq limit 20;\n`,
  }
  const res: Record<string, number> = {}
  try {
    for (const [name, text] of Object.entries(scripts)) {
      const f = join(dir, 'q.sql')
      writeFileSync(f, text)
      const o = execFileSync(
        'pgbench',
        [
          '-n',
          '-c',
          String(CONNECTIONS),
          '-j',
          '2',
          '-T',
          String(Math.max(3, SECONDS)),
          '-f',
          f,
          '-h',
          u.hostname,
          '-p',
          u.port || '5432',
          '-U',
          u.username || 'root',
          u.pathname.slice(1),
        ],
        { encoding: 'utf8' },
      )
      res[name] = Math.round(Number(/tps = ([\d.]+)/.exec(o)?.[1] ?? 0))
      out(`  floor  ${name.padEnd(40)} ${res[name]}/s`)
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
    await sql(`drop schema ${schema} cascade`)
  }
  return res
}

const table = new Map<string, Record<string, unknown>>()
const before = process.env.BENCH_BEFORE
out(`read sweep: ${N} signals, ${SECONDS} s a cell, wrk ${CONNECTIONS} connections, random paths`)
const fl = await floor()
for (const [label, root] of (before
  ? [
      ['before', before],
      ['after', undefined],
    ]
  : [['after', undefined]]) as Array<[string, string | undefined]>)
  await measure(label, root, table)
out('\nvs the floor (same run):')
for (const [name, f] of Object.entries(fl))
  for (const label of ['before', 'after']) {
    const r = table.get(`${name}|${label}`)
    if (r) out(`  ${label.padEnd(6)} ${name.padEnd(40)} ${r.rps}/s = ${round((r.rps as number) / f, 3)}x floor (${f}/s)`)
  }
