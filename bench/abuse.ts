import { setMaxListeners } from 'node:events'
import pg from 'pg'
import { ATTACKS, type Attack } from './lib/attacks.js'
import { percentile, round } from './lib/load.js'
import { from, type Client } from './lib/net.js'
import { metric, startRole } from './lib/procs.js'

// npm run bench:abuse: honest long-poll followers and publishers on one real single-process board
// (`npm start`'s code, on the machine's PostgreSQL) while an attacker runs each attack in turn, with
// a quiet phase first and last: honest delivery p50/p99 (publish → a follower has it), publish
// p50/p99, and the server's CPU per request (process_cpu_seconds_total over every request it saw).
// BENCH_SECONDS per phase (default 4); BENCH_FLOOD_AT_ONCE (the flood's requests in flight, default 16);
// BENCH_DATABASE_URL (default the machine's PostgreSQL).

const SECONDS = Number(process.env.BENCH_SECONDS ?? 4)
const DATABASE_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test'
const FOLLOWERS = 20
const PUBLISHERS = 5
const PUBLISH_EVERY_MS = 200 // 5 publishers: 25 signals a second
const SEED = 20_000
const log = (s: string) => process.stdout.write(`${s}\n`)

interface Phase {
  name: string
  delivery: number[]
  publish: number[]
  publishFailed: number
  attacks: Map<number, number>
  cpuMsPerRequest: number
}

const schema = `bench_abuse_${process.pid}`
const port = 20_000 + Math.floor(Math.random() * 20_000)
const env = { DATABASE_URL, WIRE_PG_SCHEMA: schema, PUBLISH_RATE_LIMIT_MAX: '0' }
const server = await startRole('server', port, env)
const admin = new pg.Client({ connectionString: DATABASE_URL })
await admin.connect()
try {
  await seed(admin)
  await runPhase(server.url, null) // warm-up (the tail takes in the seed, JIT, pools): not reported
  const phases: Phase[] = []
  for (const attack of [null, ...ATTACKS, null]) phases.push(await runPhase(server.url, attack))
  log(
    `\n${SECONDS} s per phase; ${FOLLOWERS} long-poll followers and ${PUBLISHERS} publishers (${(PUBLISHERS * 1000) / PUBLISH_EVERY_MS}/s), each on its own address; ${SEED} signals seeded`,
  )
  log(
    '| phase | delivery p50 / p99 ms | publish p50 / p99 ms | honest failures | attack requests (status: count) | server CPU ms / request |',
  )
  log('| --- | --- | --- | --- | --- | --- |')
  for (const p of phases) {
    const d = [...p.delivery].sort((a, b) => a - b)
    const q = [...p.publish].sort((a, b) => a - b)
    const codes =
      [...p.attacks]
        .sort((a, b) => a[0] - b[0])
        .map(([k, v]) => `${k}: ${v}`)
        .join(', ') || '—'
    log(
      `| ${p.name} | ${round(percentile(d, 50), 1)} / ${round(percentile(d, 99), 1)} | ${round(percentile(q, 50), 1)} / ${round(percentile(q, 99), 1)} | ${p.publishFailed} | ${codes} | ${round(p.cpuMsPerRequest, 3)} |`,
    )
  }
} finally {
  await server.stop()
  await admin.query(`drop schema if exists "${schema}" cascade`).catch(() => {})
  await admin.end()
}

/** SEED signals of ~1 KiB straight into the table (as the sweeper tests do): the expensive reads have something to scan. */
async function seed(db: pg.Client) {
  await db.query(
    `with h as (update "${schema}".feed_head set seq = seq + $1 returning seq)
     insert into "${schema}".signals (seq, id, origin, origin_uri, origin_verified, type, tags, payload, ttl_seconds, created_at, expires_at)
     select h.seq - $1 + i, 's' || lpad(i::text, 19, '0'), 'fp_seed' || (i % 50), 'sw://bench/identities/seed', true, 'seed',
            array['seed', 'n' || (i % 100)], json_build_object('$type', 'seed', 'text', repeat('Lorem ipsum dolor sit amet ', 36))::text,
            3600, now(), now() + interval '1 hour'
     from h, generate_series(1, $1::int) i`,
    [SEED],
  )
}

async function runPhase(url: string, attack: Attack | null): Promise<Phase> {
  const phase: Phase = {
    name: attack?.name ?? 'no attack',
    delivery: [],
    publish: [],
    publishFailed: 0,
    attacks: new Map(),
    cpuMsPerRequest: 0,
  }
  const stop = new AbortController()
  setMaxListeners(1000, stop.signal) // every attack request listens on it
  const followers = Array.from({ length: FOLLOWERS }, (_, i) => from(url, `127.0.1.${i + 1}`, 2))
  const publishers = Array.from({ length: PUBLISHERS }, (_, i) => from(url, `127.0.7.${i + 1}`, 2))
  const head = JSON.parse((await followers[0]!.request('GET', '/sw/signals?limit=1')).body).nextCursor as number
  const attacking = attack?.run(url, stop.signal, phase.attacks)
  await new Promise((r) => setTimeout(r, 500)) // the attack under way before measuring
  const cpu0 = await metric(url, 'process_cpu_seconds_total')
  let served = 0
  const end = Date.now() + SECONDS * 1000
  const follow = (c: Client) => async () => {
    let cursor = head
    while (Date.now() < end) {
      const r = await c.request('GET', `/sw/signals?cursor=${cursor}&tag=honest&wait=5`)
      served++
      if (r.status !== 200) continue
      const page = JSON.parse(r.body) as { signals: Array<{ payload: { at: number } }>; nextCursor: number }
      const now = Date.now()
      for (const s of page.signals) phase.delivery.push(now - s.payload.at)
      cursor = page.nextCursor
    }
  }
  const publish = (c: Client, i: number) => async () => {
    for (let n = 0; Date.now() < end; n++) {
      const t0 = performance.now()
      const body = JSON.stringify({ $type: 'broadcast', $tags: ['honest'], at: Date.now(), n })
      const r = await c.request('POST', '/sw/signals', body, { authorization: `Bearer honest-publisher-${i}` })
      served++
      if (r.status === 200) phase.publish.push(performance.now() - t0)
      else phase.publishFailed++
      await new Promise((res) => setTimeout(res, PUBLISH_EVERY_MS))
    }
  }
  await Promise.all([...followers.map((c) => follow(c)()), ...publishers.map((c, i) => publish(c, i)())])
  const cpu1 = await metric(url, 'process_cpu_seconds_total')
  stop.abort()
  await attacking
  const attackRequests = [...phase.attacks.values()].reduce((a, b) => a + b, 0)
  phase.cpuMsPerRequest = ((cpu1 - cpu0) * 1000) / Math.max(1, served + attackRequests)
  for (const c of [...followers, ...publishers]) c.close()
  await new Promise((r) => setTimeout(r, 1000)) // sockets and waits of the attack wound down
  return phase
}
