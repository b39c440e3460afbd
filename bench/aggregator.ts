import pg from 'pg'
import { percentile, round } from './lib/load.js'
import { holdPollers } from './lib/pollers.js'
import { startRole, type RoleProc } from './lib/procs.js'

// npm run bench:aggregator — the aggregator, as processes of the built code on this machine's PostgreSQL:
//  1. proxied long-polls: AGG_BASE_POLLERS (6000) followers unshared, then shared, then AGG_POLLERS (10000) shared, wait on one board through
//     {aggregator}/sw/{authority}; AGG_ROUNDS publishes made directly on the board wake them all.
//     Prints the aggregator's resident memory per waiting poll, CPU per proxied answer and the time
//     from a publish to the last poll answered.
//  2. index freshness: AGG_BOARDS (10) boards publish together (AGG_PUBLISHES each, spaced
//     AGG_GAP_MS); a search long-poll on the aggregator records when each signal arrives. Prints
//     publish-acknowledged → searchable p50 and p99.
// Settings: AGG_PART (proxy|freshness|both), DATABASE_URL. Run under `flock /tmp/bench.lock`.

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test'
const PART = process.env.AGG_PART ?? 'both'
const out = (s: string) => process.stdout.write(`${s}\n`)
const TOKEN = 'bench-aggregator-token'
let nextPort = 18210
const run = `b${process.pid}`

const open: RoleProc[] = []
const schemas: string[] = []
async function dropSchemas() {
  const c = new pg.Client({ connectionString: DATABASE_URL })
  await c.connect()
  for (const s of schemas) for (const x of [s, `${s}_boss`]) await c.query(`drop schema if exists "${x}" cascade`)
  await c.end()
}

const NO_BUDGETS = {
  READ_RATE_LIMIT_MAX: '0',
  LONG_POLLS_PER_ADDRESS_MAX: '0',
  PUBLISH_RATE_LIMIT_MAX: '0',
  PUBLISH_ADDRESS_RATE_LIMIT_MAX: '0',
  PUBLISH_ATTEMPT_RATE_LIMIT_MAX: '0',
  NEW_IDENTITY_RATE_LIMIT_MAX: '0',
  SHED_EVENT_LOOP_DELAY_MS: '0',
}

async function board(n: number): Promise<{ proc: RoleProc; authority: string }> {
  const port = nextPort++
  const schema = `${run}_board${n}`
  schemas.push(schema)
  const proc = await startRole('server', port, {
    DATABASE_URL,
    WIRE_PG_SCHEMA: schema,
    PUBLIC_WIRE_HOST: `127.0.0.1:${port}`,
    ...NO_BUDGETS,
  })
  open.push(proc)
  return { proc, authority: `127.0.0.1:${port}` }
}

async function aggregator(extra: Record<string, string> = {}): Promise<RoleProc> {
  const schema = `${run}_agg`
  schemas.push(schema)
  const proc = await startRole('aggregator', nextPort++, {
    DATABASE_URL,
    AGGREGATOR_PG_SCHEMA: schema,
    AGGREGATOR_ALLOW_HOSTS: '127.0.0.1',
    AGGREGATOR_CONNECTIONS_PER_BOARD: '20000',
    AGGREGATOR_REGISTER_RATE_LIMIT_MAX: '0',
    HTTP_MAX_CONNECTIONS: '0',
    READER_MAX_WAITERS: '0',
    ...NO_BUDGETS,
    ...extra,
  })
  open.push(proc)
  return proc
}

async function register(agg: RoleProc, url: string) {
  const r = await fetch(`${agg.url}/registry/boards`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
    body: JSON.stringify({ url }),
  })
  if (r.status !== 201) throw new Error(`register ${url}: ${r.status} ${await r.text()}`)
}

const publish = async (url: string, text: string) => {
  const r = await fetch(`${url}/sw/signals`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
    body: JSON.stringify({ $type: 'broadcast', text }),
  })
  if (r.status !== 200) throw new Error(`publish: ${r.status}`)
  return ((await r.json()) as { signal: { id: string } }).signal.id
}

async function proxiedPolls(pollers: number, shared: boolean) {
  const rounds = Number(process.env.AGG_ROUNDS ?? 5)
  const b = await board(nextPort)
  const agg = await aggregator({ AGGREGATOR_SHARED_POLLS: shared ? '1' : '0' })
  await register(agg, b.proc.url)
  const { nextCursor } = (await (await fetch(`${b.proc.url}/sw/signals`)).json()) as { nextCursor: number }
  const rss0 = agg.rssBytes()
  const held = await holdPollers(agg.url, pollers, nextCursor, { path: `/sw/${b.authority}/sw/signals?cursor=`, wait: 25 })
  await new Promise((r) => setTimeout(r, 2000)) // every poll reaches the board and waits
  const rss1 = agg.rssBytes()
  const cpu0 = agg.cpuSeconds()
  await held.report()
  const spreads: number[] = []
  for (let i = 0; i < rounds; i++) {
    const t0 = performance.timeOrigin + performance.now()
    await publish(b.proc.url, `round ${i}`)
    const deadline = Date.now() + 20_000
    let arrivals: number[] = []
    let got = 0
    while (got < pollers && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50))
      const rep = await held.report()
      arrivals = arrivals.concat(rep.arrivals)
      got = arrivals.length
    }
    spreads.push(Math.max(...arrivals) - t0)
    out(`  round ${i}: ${got}/${pollers} proxied polls answered, last ${round(Math.max(...arrivals) - t0)} ms after the publish`)
  }
  const rep = await held.report()
  const cpu = agg.cpuSeconds() - cpu0
  const refusedLines = agg
    .logTail()
    .split('\n')
    .filter((l) => l.includes('refused under load') || l.includes('"request failed"'))
  const answers = pollers * rounds
  await held.stop()
  await agg.stop()
  await b.proc.stop()
  out(
    `proxied long-polls, ${shared ? 'shared' : 'each its own upstream request'}: ${pollers} waiting through one aggregator process (errors ${rep.errors} ${JSON.stringify(rep.refusals)} ${JSON.stringify(rep.reasons)})`,
  )
  // which hop refused, and why: the aggregator's own refusals and failures (reason and cause), counted
  const why = new Map<string, number>()
  for (const l of refusedLines) {
    let k = 'a cut line'
    try {
      const { reason, cause, err } = JSON.parse(l) as {
        reason?: string
        cause?: string
        err?: { message?: string; cause?: { message?: string } }
      }
      k = err ? `${err.message} (${err.cause?.message ?? 'no cause'})` : `${reason} (${cause ?? 'no cause'})`
    } catch {
      // the tail's first line, cut
    }
    why.set(k, (why.get(k) ?? 0) + 1)
  }
  for (const [k, n] of why) out(`  refused at the aggregator (the last 64 KiB of its log): ${n} × ${k}`)
  out(
    `  aggregator RSS: ${round(rss0 / 2 ** 20)} MiB idle, ${round(rss1 / 2 ** 20)} MiB holding them: ${round((rss1 - rss0) / pollers / 1024, 1)} KiB per waiting poll`,
  )
  out(
    `  aggregator CPU: ${round((cpu * 1e6) / answers, 1)} us per proxied answer (${answers} answers plus their re-polls), publish → last answer p50 ${round(
      percentile(
        [...spreads].sort((a, b) => a - b),
        50,
      ),
    )} ms`,
  )
}

async function freshness() {
  const boards = Number(process.env.AGG_BOARDS ?? 10)
  const each = Number(process.env.AGG_PUBLISHES ?? 100)
  const gap = Number(process.env.AGG_GAP_MS ?? 20)
  const bs = []
  for (let i = 0; i < boards; i++) bs.push(await board(i + 100))
  const agg = await aggregator()
  for (const b of bs) await register(agg, b.proc.url)
  let { nextCursor: cursor } = (await (await fetch(`${agg.url}/search/signals`)).json()) as { nextCursor: number }
  const acked = new Map<string, number>()
  const seen = new Map<string, number>()
  let following = true
  const follower = (async () => {
    while (following) {
      const page = (await (await fetch(`${agg.url}/search/signals?cursor=${cursor}&wait=5&limit=100`)).json()) as {
        signals: Array<{ id: string }>
        nextCursor: number
      }
      const now = performance.now()
      for (const s of page.signals) if (!seen.has(s.id)) seen.set(s.id, now)
      cursor = page.nextCursor
    }
  })()
  const cpu0 = agg.cpuSeconds()
  await Promise.all(
    bs.map(async (b, i) => {
      for (let n = 0; n < each; n++) {
        const id = await publish(b.proc.url, `board ${i} signal ${n} ${Math.random().toString(36).slice(2)}`)
        acked.set(id, performance.now())
        await new Promise((r) => setTimeout(r, gap))
      }
    }),
  )
  const end = Date.now() + 30_000
  while (seen.size < acked.size && Date.now() < end) await new Promise((r) => setTimeout(r, 50))
  following = false
  await follower
  const lat = [...acked].map(([id, t]) => (seen.get(id) ?? Infinity) - t).sort((a, b) => a - b)
  const cpu = agg.cpuSeconds() - cpu0
  out(`index freshness: ${boards} boards publishing together, ${acked.size} signals (${each} each, one per ${gap} ms per board)`)
  out(
    `  publish acknowledged → found by a search long-poll: p50 ${round(percentile(lat, 50))} ms, p99 ${round(percentile(lat, 99))} ms, max ${round(lat.at(-1)!)} ms; ${lat.filter((x) => x === Infinity).length} never found`,
  )
  out(`  aggregator CPU: ${round((cpu * 1000) / acked.size, 3)} ms per indexed signal (following, indexing, answering the search)`)
}

try {
  // the same run: each poll on its own upstream request (the most a process's 20,000 open files allow
  // is under 10,000 then: two sockets each), then shared at that count, then shared at AGG_POLLERS
  const base = Number(process.env.AGG_BASE_POLLERS ?? 6000)
  if (PART !== 'freshness')
    for (const [n, shared] of [
      [base, false],
      [base, true],
      [Number(process.env.AGG_POLLERS ?? 10_000), true],
    ] as const)
      if (n > 0) await proxiedPolls(n, shared)
  if (PART !== 'proxy') await freshness()
} finally {
  for (const p of open.reverse()) await p.stop()
  await dropSchemas()
}
