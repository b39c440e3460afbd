import { freePort, startRole } from './lib/procs.js'
import { holdPollers } from './lib/pollers.js'
import { sqlOn } from './lib/sql.js'

// npm run bench:metrics-scrape: what one GET /metrics costs a reader (its CPU per scrape, from
// /proc, and the wall time the client saw) with 0, 1,000 and 10,000 followers waiting on it
// (BENCH_SCRAPE_FOLLOWERS). Every scrape runs on the event loop the followers' answers wait on.
// Settings: BENCH_SCRAPES (20 per step), BENCH_BEFORE (another built checkout: its reader measured
// first, then this one's, alternately BENCH_REPEAT times, default 2), DATABASE_URL, REDIS_URL.

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test'
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'
const FOLLOWERS = (process.env.BENCH_SCRAPE_FOLLOWERS ?? '0,1000,10000').split(',').map(Number)
const SCRAPES = Number(process.env.BENCH_SCRAPES ?? 20)
const REPEAT = Number(process.env.BENCH_REPEAT ?? 2)
const BUILDS: Array<[string, string | undefined]> = process.env.BENCH_BEFORE
  ? [
      ['before', process.env.BENCH_BEFORE],
      ['after', undefined],
    ]
  : [['this build', undefined]]
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const sql = sqlOn(DATABASE_URL)

async function run(label: string, root: string | undefined) {
  const schema = `bench_scrape_${Date.now()}`
  const env = {
    DATABASE_URL,
    REDIS_URL,
    WIRE_PG_SCHEMA: schema,
    READ_RATE_LIMIT_MAX: '0',
    LONG_POLLS_PER_ADDRESS_MAX: '0',
    HTTP_MAX_CONNECTIONS: '0',
  }
  await (await startRole('server', await freePort(), env, root)).stop() // a reader never migrates
  const reader = await startRole('reader', await freePort(), env, root)
  try {
    const { nextCursor } = (await (await fetch(`${reader.url}/sw/signals?limit=1`)).json()) as { nextCursor: number }
    const out: string[] = []
    for (const n of FOLLOWERS) {
      const followers = n ? await holdPollers(reader.url, n, nextCursor) : null
      await sleep(2000) // their connecting done
      const cpu0 = reader.cpuSeconds()
      const t0 = performance.now()
      for (let i = 0; i < SCRAPES; i++) await (await fetch(`${reader.url}/metrics`)).text()
      out.push(
        `${n} followers: ${(((reader.cpuSeconds() - cpu0) / SCRAPES) * 1000).toFixed(1)} ms CPU, ${((performance.now() - t0) / SCRAPES).toFixed(1)} ms wall per scrape`,
      )
      await followers?.stop()
    }
    process.stdout.write(`${label}: ${out.join('; ')}\n`)
  } finally {
    await reader.stop()
    await sql(`drop schema if exists "${schema}" cascade; drop schema if exists "${schema}_boss" cascade`) // the single process made both
  }
}

process.stdout.write(`wire bench:metrics-scrape ${new Date().toISOString()}: ${SCRAPES} scrapes per step (CPU from /proc at 10 ms ticks)\n`)
for (let r = 0; r < REPEAT; r++) for (const [label, root] of BUILDS) await run(label, root)
process.exit(0)
