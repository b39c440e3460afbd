import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { smapsSummary, heapSpaces } from './lib/memory-detail.js'
import { freePort, metric, startRole } from './lib/procs.js'
import { sqlOn } from './lib/sql.js'

// npm run bench:fresh: the RSS of a fresh process (the budget: ≤ 100 MB), read from
// /proc/<pid>/status (VmRSS) 2 s after /readyz first answered 200, no request in between, and again
// BENCH_FRESH_LATER_SECONDS (10) after. Each figure at 2 s is marked * when the idle collection
// (libs/shared/runtime/idle-gc.ts, which a role asks for once it has started) had run by then.
// Each start on a schema of its own (PostgreSQL) or a data directory of its own (embedded PGlite).
// Settings: BENCH_FRESH_ROLES (server,reader: the single process and a reader alone), BENCH_FRESH_STARTS (3),
// BENCH_FRESH_DB (postgres | embedded; a reader needs PostgreSQL), BENCH_BEFORE (another built
// checkout: before and after alternate, start by start), DATABASE_URL, BENCH_MEMORY_DETAIL=1 (where the
// RSS is: mappings by kind and V8's heap spaces, bench/lib/memory-detail.ts).
// The roles get this process's environment too: REDIS_URL=… measures them with Redis.

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test'
const ROLES = (process.env.BENCH_FRESH_ROLES ?? 'server,reader').split(',') as Array<'server' | 'reader'>
const STARTS = Number(process.env.BENCH_FRESH_STARTS ?? 3)
const EMBEDDED = process.env.BENCH_FRESH_DB === 'embedded'
const SETTLE_SECONDS = 2
const LATER_SECONDS = Number(process.env.BENCH_FRESH_LATER_SECONDS ?? 10)
const out = (s: string) => process.stdout.write(`${s}\n`)
const sql = sqlOn(DATABASE_URL)

/** VmRSS of `pid`, MiB. */
function vmRss(pid: number): number {
  const kb = Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1])
  return Math.round((kb / 1024) * 10) / 10
}

/** One start: VmRSS SETTLE_SECONDS after /readyz, whether the idle collection (libs/shared/runtime/idle-gc.ts) had run by then, and VmRSS LATER_SECONDS after. */
async function once(role: 'server' | 'reader', label: string, root: string | undefined): Promise<string> {
  const schema = `bench_fresh_${Date.now()}`
  const dir = mkdtempSync(join(tmpdir(), 'wire-fresh-'))
  const env: Record<string, string> = EMBEDDED ? { WIRE_DATA_DIR: dir } : { DATABASE_URL, WIRE_PG_SCHEMA: schema }
  // a reader never migrates: the single process makes its schema first
  if (role === 'reader' && !EMBEDDED) await (await startRole('server', await freePort(), env, root)).stop()
  const proc = await startRole(role, await freePort(), env, root)
  try {
    await new Promise((r) => setTimeout(r, SETTLE_SECONDS * 1000))
    const rss = vmRss(proc.child.pid!)
    const smaps = smapsSummary(proc.child.pid!)
    // read after the RSS: a request to the process
    const collected = await metric(proc.url, 'wire_idle_gc_total')
    if (process.env.BENCH_MEMORY_DETAIL === '1')
      out(
        `  ${role} ${label} ${rss.toFixed(1)} MiB, pid ${proc.child.pid}: smaps MB ${JSON.stringify(smaps)}; heap MB used/committed ${JSON.stringify(await heapSpaces(proc.url))}`,
      )
    await new Promise((r) => setTimeout(r, (LATER_SECONDS - SETTLE_SECONDS) * 1000))
    return `${rss.toFixed(1)}${collected > 0 ? '*' : ''} (${vmRss(proc.child.pid!).toFixed(1)})`
  } finally {
    await proc.stop()
    rmSync(dir, { recursive: true, force: true })
    if (!EMBEDDED) await sql(`drop schema if exists ${schema} cascade; drop schema if exists ${schema}_boss cascade`)
  }
}

const before = process.env.BENCH_BEFORE
const builds = (
  before
    ? [
        ['before', before],
        ['after', undefined],
      ]
    : [['after', undefined]]
) as Array<[string, string | undefined]>
out(
  `fresh processes (${EMBEDDED ? 'embedded' : 'PostgreSQL'}), VmRSS ${SETTLE_SECONDS} s after /readyz (* the idle collection had run by then) and (${LATER_SECONDS} s after), ${STARTS} starts each, ${new Date().toISOString()}`,
)
for (const role of ROLES) {
  const figures = new Map<string, string[]>(builds.map(([label]) => [label, []]))
  for (let i = 0; i < STARTS; i++) for (const [label, root] of builds) figures.get(label)!.push(await once(role, label, root))
  out(
    `${role === 'server' ? 'single process' : role}: ${builds.map(([label]) => `${label} ${figures.get(label)!.join(' ')}`).join('; ')} MiB`,
  )
}
