import { readdirSync, readFileSync } from 'node:fs'
import pg from 'pg'
import { Agent, request } from 'undici'
import { startHostileBoard, type HostileBoard } from './lib/hostile-board.js'
import { freePort, metric, startRole } from './lib/procs.js'

// npm run bench:aggregator-pump — what answers pumped through the aggregator's proxy cost it, for
// each AGGREGATOR_PROXY_BOARD_BYTES_PER_SECOND in BENCH_RATES (0: the budget off): BENCH_BOARDS
// hostile boards ('huge', each answer BENCH_ANSWER_BYTES) and BENCH_CONCURRENCY proxied requests
// at once to them, each again as soon as the last ended (after a refusal, 250 ms later), for
// BENCH_SECONDS. The aggregator is a process of the built code; the boards and the clients run
// here, so its CPU (from /proc, per thread: V8's workers do most of a major collection's marking)
// is its own. BENCH_CLIENT_BYTES_PER_SECOND: the clients, together, read no faster than this
// (slow readers, the budget off: what slow streams cost without it). Run under `flock /tmp/bench.lock`.

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test'
const num = (k: string, d: number) => Number(process.env[k] ?? d)
const SECONDS = num('BENCH_SECONDS', 10)
const CONCURRENCY = num('BENCH_CONCURRENCY', 16)
const CLIENT_BPS = num('BENCH_CLIENT_BYTES_PER_SECOND', 0)
const MiB = 1024 * 1024
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** CPU ms of each kind of thread of a process so far (its threads' names), from /proc. */
function threadCpuMs(pid: number): Record<string, number> {
  const out: Record<string, number> = {}
  for (const t of readdirSync(`/proc/${pid}/task`)) {
    const st = readFileSync(`/proc/${pid}/task/${t}/stat`, 'utf8')
    const name = st.slice(st.indexOf('(') + 1, st.lastIndexOf(')'))
    const f = st.slice(st.lastIndexOf(')') + 2).split(' ')
    out[name] = (out[name] ?? 0) + (Number(f[11]) + Number(f[12])) * 10
  }
  return out
}

async function phase(rate: number): Promise<string> {
  const schema = `pump${process.pid}_${rate}`
  const port = await freePort()
  const agg = await startRole('aggregator', port, {
    DATABASE_URL,
    AGGREGATOR_PG_SCHEMA: schema,
    AGGREGATOR_ALLOW_HOSTS: '127.0.0.1',
    TRUST_PROXY: '127.0.0.1',
    SERVER_ADMIN_TOKEN: 'bench-admin-token-bench-admin-token',
    PUBLIC_WIRE_URL: `http://127.0.0.1:${port}`,
    AGGREGATOR_PROXY_BOARD_BYTES_PER_SECOND: String(rate),
  })
  const steps: Array<() => unknown> = []
  const boards: HostileBoard[] = []
  const dispatcher = new Agent({ connections: 1024 })
  try {
    for (let i = 0; i < num('BENCH_BOARDS', 2); i++) {
      const b = await startHostileBoard({ teardown: (s) => void steps.push(s) }, 'huge', { hugeBytes: num('BENCH_ANSWER_BYTES', 8 * MiB) })
      const r = await fetch(`${agg.url}/registry/boards`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer bench-pumper' },
        body: JSON.stringify({ url: b.url }),
      })
      if (r.status !== 201) throw new Error(`register: ${r.status}`)
      boards.push(b)
    }
    await sleep(2000) // the follower has read each board's one page (and marked it)
    const stop = new AbortController()
    const statuses: Record<string, number> = {}
    let bytes = 0
    const pump = async (i: number) => {
      const perClient = CLIENT_BPS / CONCURRENCY
      while (!stop.signal.aborted) {
        try {
          const res = await request(`${agg.url}/sw/${boards[i % boards.length]!.authority}/sw/signals`, {
            dispatcher,
            headers: { 'x-forwarded-for': `10.66.0.${(i % 4) + 1}` },
            signal: stop.signal,
          })
          statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1
          for await (const c of res.body as AsyncIterable<Buffer>) {
            bytes += c.length
            if (perClient > 0) await sleep((c.length / perClient) * 1000)
          }
          if (res.statusCode >= 300) await sleep(250)
        } catch {
          if (!stop.signal.aborted) await sleep(250)
        }
      }
    }
    const [cpu0, threads0, majors0, t0] = [agg.cpuSeconds(), threadCpuMs(agg.child.pid!), await majors(agg.url), Date.now()]
    const running = Array.from({ length: CONCURRENCY }, (_, i) => pump(i))
    await sleep(SECONDS * 1000)
    const [cpu, threads, gcs, s] = [
      agg.cpuSeconds() - cpu0,
      threadCpuMs(agg.child.pid!),
      (await majors(agg.url)) - majors0,
      (Date.now() - t0) / 1000,
    ]
    const through = bytes / MiB
    stop.abort()
    await Promise.allSettled(running)
    const [waited, refused] = [
      await metric(agg.url, 'wire_aggregator_proxy_throttled_total', 'waited'),
      await metric(agg.url, 'wire_aggregator_proxy_throttled_total', 'refused'),
    ]
    const secs = (name: string) => (((threads[name] ?? 0) - (threads0[name] ?? 0)) / 1000).toFixed(2)
    return `| ${rate ? `${rate / MiB} MiB/s` : 'off'} | ${through.toFixed(0)} | ${(through / s).toFixed(1)} | ${(cpu / s).toFixed(2)} | ${secs('MainThread')} / ${secs('V8Worker')} | ${((cpu * 1000) / through).toFixed(1)} | ${gcs} | ${Object.entries(
      statuses,
    )
      .map(([k, v]) => `${v}×${k}`)
      .join(' ')} | ${waited} / ${refused} |`
  } finally {
    await agg.stop()
    for (const st of steps) await st()
    await dispatcher.close()
    const c = new pg.Client({ connectionString: DATABASE_URL })
    await c.connect()
    for (const x of [schema, `${schema}_boss`]) await c.query(`drop schema if exists "${x}" cascade`)
    await c.end()
  }
}

/** Major collections the process has made so far (prom-client's GC histogram). */
const majors = (url: string) => metric(url, 'nodejs_gc_duration_seconds_count', 'kind="major"')

const rows: string[] = []
const load0 = readFileSync('/proc/loadavg', 'utf8').trim()
for (const rate of (process.env.BENCH_RATES ?? `0,${16 * MiB}`).split(',').map(Number)) rows.push(await phase(rate))
process.stdout.write(
  `\naggregator pump bench, ${new Date().toISOString()}: ${num('BENCH_BOARDS', 2)} hostile boards, ${CONCURRENCY} proxied requests at once, ` +
    `${SECONDS} s each, clients reading ${CLIENT_BPS ? `at most ${(CLIENT_BPS / MiB).toFixed(1)} MiB/s together` : 'as fast as they can'}; ` +
    `/proc/loadavg at the start ${load0}, at the end ${readFileSync('/proc/loadavg', 'utf8').trim()}\n\n` +
    '| budget per board | MiB through | MiB/s | aggregator CPU (of one core) | main thread / V8 workers, s | CPU ms per MiB | major GCs | answers (status) | waited / refused |\n' +
    '|---|---|---|---|---|---|---|---|---|\n' +
    `${rows.join('\n')}\n`,
)
