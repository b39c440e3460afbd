import { sqlOn, untilHead } from './lib/sql.js'
import { client, closedLoop, round } from './lib/load.js'
import { metric, startRole } from './lib/procs.js'

// npm run bench:catch-up: how fast a follower far behind the head catches up on a fresh board whose
// `signals` table has never been analysed (a board's first minutes, a restore, a table after a big
// purge). One single-process board on this machine's PostgreSQL; 20,000 signals seeded by SQL; one
// sequential follower reading `limit` at a time from cursor 0, unfiltered and tag-filtered; then a
// deep-cursor read load (`cursor=1000&limit=7`, 8 clients). Never runs ANALYZE: it prints whether
// autovacuum analysed the table during the run, so a figure can't look good by accident.
// Settings: CATCHUP_SIGNALS (20000), BENCH_SECONDS (5), BENCH_BEFORE (another built checkout), DATABASE_URL.

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test'
const N = Number(process.env.CATCHUP_SIGNALS ?? 20_000)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const out = (s: string) => process.stdout.write(`${s}\n`)

const sql = sqlOn(DATABASE_URL)

/** N signals as the writer stores them (dense seq, head moved), tags `bench` and one of `g0`..`g3`. */
async function seed(schema: string) {
  await sql(
    `
    insert into ${schema}.signals (seq, id, origin, origin_name, origin_uri, origin_verified, type, tags, payload, ref_id, ttl_seconds, created_at, expires_at)
    select i, lpad(i::text, 20, 'x'), 'fp_bench', null, 'sw://localhost/identities/fp_bench', true, 'broadcast',
           array['bench', 'g' || (i % 4)], '{"$type":"broadcast","text":"signal ' || i || '"}', null, 43200, now(), now() + interval '12 hours'
    from generate_series(1, $1::int) i`,
    [N],
  )
  await sql(`update ${schema}.feed_head set seq = $1`, [N])
}

const analysed = async (schema: string) =>
  (
    await sql<{ n: string }>(
      `select coalesce(sum(analyze_count + autoanalyze_count), 0) as n from pg_stat_user_tables where schemaname = $1 and relname like 'signals%'`,
      [schema],
    )
  )[0]?.n ?? '0'

/** One follower from cursor 0 reading `limit` at a time for SECONDS: signals/s and ms per request. */
async function follow(base: string, limit: number, filter: string) {
  const c = client(base, 1)
  const cpu0 = await metric(base, 'process_cpu_seconds_total')
  let cursor = 0
  let signals = 0
  let requests = 0
  const t0 = performance.now()
  while (performance.now() - t0 < SECONDS * 1000) {
    const r = JSON.parse((await c.request('GET', `/sw/signals?cursor=${cursor}&limit=${limit}${filter}`)).body) as {
      signals: unknown[]
      nextCursor: number
    }
    requests++
    signals += r.signals.length
    if (r.nextCursor === cursor) break // caught up
    cursor = r.nextCursor
  }
  const s = (performance.now() - t0) / 1000
  const cpu = (await metric(base, 'process_cpu_seconds_total')) - cpu0
  c.close()
  return {
    limit,
    filter: filter || 'none',
    signalsPerSecond: Math.round(signals / s),
    msPerRequest: round((s * 1000) / requests),
    serverCpuMsPerRequest: round((cpu * 1000) / requests, 3),
    reachedCursor: cursor,
  }
}

async function deepCursor(base: string) {
  const c = client(base, 8)
  const cpu0 = await metric(base, 'process_cpu_seconds_total')
  const r = await closedLoop(8, SECONDS, async () => (await c.request('GET', '/sw/signals?cursor=1000&limit=7')).status === 200)
  const cpu = (await metric(base, 'process_cpu_seconds_total')) - cpu0
  c.close()
  return { requestsPerSecond: r.perSecond, p50: r.p50, p99: r.p99, serverCpuMsPerRequest: round((cpu * 1000) / Math.max(1, r.ok), 3) }
}

/** One build on a fresh schema: seed, wait for the server to see the head, measure. */
async function measure(label: string, root: string | undefined) {
  const schema = `bench_catchup_${Date.now()}`
  const port = 4700 + Math.floor(Math.random() * 200)
  // the server migrates the fresh schema; seeding happens after, while it runs (as publishes would).
  // One client address does every read: per-address budgets off, as a board behind many clients would not see them
  const env = {
    DATABASE_URL,
    WIRE_PG_SCHEMA: schema,
    WAKE_FALLBACK_POLL_MS: '200',
    READ_RATE_LIMIT_MAX: '0',
    LONG_POLLS_PER_ADDRESS_MAX: '0',
  }
  const server = await startRole('server', port, env, root)
  try {
    await seed(schema)
    await untilHead(server.url, N)
    out(`${label}: ${N} signals behind, table analysed ${await analysed(schema)} times before the run`)
    for (const [limit, filter] of [
      [3, ''],
      [3, '&tag=g1'],
      [100, ''],
      [100, '&tag=g1'],
    ] as const)
      out(`  ${JSON.stringify(await follow(server.url, limit, filter))}`)
    out(`  deep cursor (cursor=1000&limit=7, 8 clients): ${JSON.stringify(await deepCursor(server.url))}`)
    out(`  table analysed ${await analysed(schema)} times by the end of the run`)
  } finally {
    await server.stop()
    await sql(`drop schema if exists ${schema} cascade; drop schema if exists ${schema}_boss cascade`)
  }
}

// BENCH_BEFORE=<another built checkout>: before and after alternate, twice, in one run
const before = process.env.BENCH_BEFORE
const builds: Array<[string, string | undefined]> = before
  ? [
      ['before', before],
      ['after', undefined],
      ['before', before],
      ['after', undefined],
    ]
  : [['this build', undefined]]
for (const [label, root] of builds) await measure(label, root)
