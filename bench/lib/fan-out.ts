import { readFileSync } from 'node:fs'
import { percentile, round } from './load.js'
import { holdPollers } from './pollers.js'
import { metric, type RoleProc } from './procs.js'

const sum = async (urls: string[], name: string) => (await Promise.all(urls.map((u) => metric(u, name)))).reduce((a, b) => a + b, 0)
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** The machine's busy and total CPU ticks so far (/proc/stat), to tell a saturated machine from a slow server. */
function machineTicks() {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number)
  const idle = f[3]! + (f[4] ?? 0)
  const total = f.reduce((a, b) => a + b, 0)
  return { idle, total }
}

async function until(check: () => Promise<boolean>, ms: number) {
  const end = Date.now() + ms
  while (Date.now() < end) {
    if (await check()) return true
    await sleep(50)
  }
  return false
}

export interface FanOutResult {
  pollers: number
  /** Pollers that were waiting when the rounds began (a few may fail to connect on a saturated machine). */
  waiting: number
  readers: number
  clientProcesses: number
  rounds: number
  responses: number
  errors: number
  /** Reader CPU (all readers) per response written, µs. */
  serverUsPerResponse: number
  /** Client CPU per response read, µs. */
  clientUsPerResponse: number
  /** Client CPU / wall time during the rounds, in cores, and its processes: near `clientProcesses`, the client is the bottleneck. */
  clientCores: number
  /** Share of the machine's CPU idle during the rounds: near 0, the machine is (wall-clock figures are the machine's). */
  machineIdle: number
  p50: number
  p99: number
  rssPerPollerKB: number
  heapPerPollerKB: number
  queriesPerWake: number
}

/**
 * `pollers` followers spread evenly over `readers`, all waiting at the head; then `rounds` times:
 * one `publish`, wait until every follower got it and waits again. The readers' CPU
 * around the rounds divided by the responses they wrote is the cost of a delivered long-poll
 * response; the client's CPU is measured the same way, to show which side limits.
 */
export async function fanOut(
  procs: RoleProc[],
  pollers: number,
  rounds: number,
  publish: () => Promise<void>,
  opts: { forwarded?: boolean } = {},
): Promise<FanOutResult> {
  const readers = procs.map((p) => p.url)
  const total = (f: (p: RoleProc) => number) => procs.reduce((s, p) => s + f(p), 0)
  const { nextCursor } = (await (await fetch(`${readers[0]}/sw/signals?limit=1`)).json()) as { nextCursor: number }
  const rss0 = total((p) => p.rssBytes())
  const heap0 = await sum(readers, 'nodejs_heap_size_used_bytes')
  const per = Math.ceil(pollers / readers.length)
  const clients = await Promise.all(
    readers.map((r, i) => holdPollers(r, Math.min(per, pollers - i * per), nextCursor, opts.forwarded ? { forwardedFrom: i * per } : {})),
  )
  const waiting = async () =>
    (await Promise.all(readers.map(async (u) => ((await (await fetch(`${u}/readyz`)).json()) as { waiting: number }).waiting))).reduce(
      (a, b) => a + b,
      0,
    )
  await until(async () => (await waiting()) >= pollers, 60_000)
  // on a saturated machine a few connections may fail to open: measure those that wait, and say so
  const held = await waiting()
  if (held < pollers * 0.95) throw new Error(`only ${held} of ${pollers} pollers are waiting`)
  const allWaiting = () => until(async () => (await waiting()) >= held, 60_000)
  const rss = total((p) => p.rssBytes())
  const heap = await sum(readers, 'nodejs_heap_size_used_bytes')
  const q0 = await sum(readers, 'wire_feed_queries_total')
  const w0 = await sum(readers, 'wire_feed_wakes_total')
  const report = async () => {
    const all = await Promise.all(clients.map((c) => c.report()))
    return {
      arrivals: all.flatMap((r) => r.arrivals),
      answered: all.reduce((s, r) => s + r.answered, 0),
      errors: all.reduce((s, r) => s + r.errors, 0),
      cpuMs: all.reduce((s, r) => s + r.cpuMs, 0),
    }
  }
  await report() // clears the arrivals of opening
  // @NOTE no /metrics scrape between here and the end: a scrape lists every open file and handle
  // (one per poller), which would bill the bench's own polling to the reader
  const cpu0 = total((p) => p.cpuSeconds())
  const c0 = await report()
  const m0 = machineTicks()
  const t0 = performance.now()
  const lat: number[] = []
  for (let r = 0; r < rounds; r++) {
    await publish()
    const acked = performance.timeOrigin + performance.now()
    let got: number[] = []
    await until(async () => ((got = got.concat((await report()).arrivals)), got.length >= held), 30_000)
    for (const t of got) lat.push(t - acked)
    await allWaiting()
  }
  const wall = performance.now() - t0
  const m1 = machineTicks()
  const cpu1 = total((p) => p.cpuSeconds())
  const c1 = await report()
  const q1 = await sum(readers, 'wire_feed_queries_total')
  const w1 = await sum(readers, 'wire_feed_wakes_total')
  await Promise.all(clients.map((c) => c.stop()))
  const responses = c1.answered - c0.answered
  lat.sort((a, b) => a - b)
  const clientCpu = c1.cpuMs - c0.cpuMs
  return {
    pollers,
    waiting: held,
    readers: readers.length,
    clientProcesses: clients.reduce((s, c) => s + c.processes, 0),
    rounds,
    responses,
    errors: c1.errors,
    serverUsPerResponse: round(((cpu1 - cpu0) * 1e6) / Math.max(1, responses), 1),
    clientUsPerResponse: round((clientCpu * 1000) / Math.max(1, responses), 1),
    clientCores: round(clientCpu / wall, 2),
    machineIdle: round((m1.idle - m0.idle) / Math.max(1, m1.total - m0.total), 2),
    p50: round(percentile(lat, 50)),
    p99: round(percentile(lat, 99)),
    rssPerPollerKB: round((rss - rss0) / held / 1024, 2),
    heapPerPollerKB: round((heap - heap0) / held / 1024, 2),
    queriesPerWake: round((q1 - q0) / Math.max(1, w1 - w0), 2),
  }
}
