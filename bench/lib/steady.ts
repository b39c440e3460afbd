import { readFileSync } from 'node:fs'
import { percentile, round } from './load.js'
import type { Front } from './front.js'
import { holdPollers } from './pollers.js'
import { memoryDetail } from './memory-detail.js'
import type { RoleProc } from './procs.js'
import { armed, collections, rssOnceCollected, rssPeak } from './rss-watch.js'

/** BENCH_MEMORY_DETAIL=1: also prints where the readers' RSS is (bench/lib/memory-detail.ts), and after a full GC: a diagnosis, whose GC changes the figures after it. */
const DETAIL = process.env.BENCH_MEMORY_DETAIL === '1'
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const mb = (bytes: number) => round(bytes / 2 ** 20, 1)
/**
 * How long the held and settled figures wait for each reader's idle collection: its interval
 * (IDLE_GC_INTERVAL_MS, 10 s) after the last one, and a few ticks. Only when every reader's RSS
 * grew enough to arm it.
 */
const COLLECTION_WAIT_MS = 15_000
const idleTicks = () => {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number)
  return { idle: f[3]! + (f[4] ?? 0), total: f.reduce((a, b) => a + b, 0) }
}
/** The key each benchmark signal's payload carries its number under (poll-proc finds it without parsing JSON). */
export const TRACK_KEY = 'bench_n'

export interface SteadyResult {
  pollers: number
  waiting: number
  readers: number
  clientProcesses: number
  signals: number
  rate: number
  /** Follower × signal pairs never delivered (the cursor promise says 0). */
  missed: number
  /** Deliveries of a signal a follower already had (0: pages after a cursor never repeat one). */
  duplicates: number
  responses: number
  errors: number
  /** Refused answers by status over the whole run (0: a connection closed and was reopened). */
  refusals: Record<string, number>
  p50: number
  p99: number
  max: number
  /** The same for the signals after the first second: a reader started for the run answers its first wake-ups with code not yet optimised. */
  warmP50: number
  warmP99: number
  serverUsPerResponse: number
  /** With a front (nginx): its CPU (all workers) per answer, µs, and the errors it logged by kind. */
  frontUsPerResponse?: number
  frontErrors?: Record<string, number>
  clientUsPerResponse: number
  clientCores: number
  machineIdle: number
  rssPerPollerKB: number
  /**
   * The same once each reader's own idle collection (libs/shared/runtime/idle-gc.ts) has run with the
   * followers waiting, as the baseline is taken after its start-up one: what the waiting followers
   * hold, without the connecting burst's garbage and V8's grown young generation. null when a reader's
   * RSS did not grow enough to arm its collection (GROW_BYTES), or it did not collect within HELD_WAIT_MS.
   */
  rssHeldPerPollerKB: number | null
  /** The same when every signal was delivered and the followers wait again (V8 has had time to collect the connect's garbage). */
  rssAfterPerPollerKB: number
  /**
   * The readers' RSS together, MB: before the followers, the largest while the signals were
   * published and delivered (sampled every 250 ms), right after, and settled (once each reader's
   * idle collection ran after the run; null when none was armed or none came in COLLECTION_WAIT_MS).
   */
  rssMB: { before: number; peak: number; after: number; settled: number | null }
}

/**
 * `pollers` followers spread over `procs` (readers), all waiting at the head, each from its own
 * client address when `forwarded`; then `signals` publishes at `rate` per second, without waiting for
 * deliveries, while every follower keeps polling from its `nextCursor`. Delivery latency is each
 * (follower, signal) pair's arrival minus that publish's acknowledgement; pairs never delivered are
 * missed. CPU per response: the readers' CPU over the whole phase / the responses the clients read.
 * With `front` (nginx), every follower polls it instead, and its CPU per response is reported beside the readers'.
 */
export async function steadyFanOut(
  procs: RoleProc[],
  o: { pollers: number; signals: number; rate: number; publish: (n: number) => Promise<void>; forwarded?: boolean; front?: Front },
): Promise<SteadyResult> {
  const readers = procs.map((p) => p.url)
  const total = (f: (p: RoleProc) => number) => procs.reduce((s, p) => s + f(p), 0)
  const { nextCursor } = (await (await fetch(`${readers[0]}/sw/signals?limit=1`)).json()) as { nextCursor: number }
  // the baseline once each reader's start-up collection ran (IdleGc.afterStart, a quiet tick after
  // start): taken before it, that collection lands while the followers connect and the per-poller
  // figure comes out too small, or below zero. Up to 5 s; a reader with IDLE_GC_INTERVAL_MS=0 never collects
  for (let i = 0; i < 100 && (await collections(procs)).some((n) => n < 1); i++) await sleep(50)
  const rss0s = procs.map((p) => p.rssBytes())
  const rss0 = rss0s.reduce((a, b) => a + b, 0)
  if (DETAIL) await memoryDetail('before the followers', procs, { sample: true })
  const per = Math.ceil(o.pollers / readers.length)
  const track = { track: TRACK_KEY, trackCount: o.signals }
  // through a front, every follower polls nginx, which spreads the polls over the readers; else each reader gets its share
  const clients = o.front
    ? [await holdPollers(o.front.url, o.pollers, nextCursor, { ...track, ...(o.forwarded && { forwardedFrom: 0 }) })]
    : await Promise.all(
        readers.map((r, i) =>
          holdPollers(r, Math.min(per, o.pollers - i * per), nextCursor, { ...track, ...(o.forwarded && { forwardedFrom: i * per }) }),
        ),
      )
  const waiting = async () =>
    (await Promise.all(readers.map(async (u) => ((await (await fetch(`${u}/readyz`)).json()) as { waiting: number }).waiting))).reduce(
      (a, b) => a + b,
      0,
    )
  for (let i = 0; i < 1200 && (await waiting()) < o.pollers; i++) await sleep(50)
  const held = await waiting()
  if (held < o.pollers * 0.95) throw new Error(`only ${held} of ${o.pollers} pollers are waiting`)
  const rss = total((p) => p.rssBytes())
  const connectArmed = armed(procs, rss0s)
  const gcs = await collections(procs)
  if (DETAIL) await memoryDetail(`with ${held} followers waiting`, procs, { gc: true })
  // the held figure: once every reader has collected since the followers were all waiting
  const rssHeld = connectArmed ? await rssOnceCollected(procs, gcs, COLLECTION_WAIT_MS) : null
  const report = async () => {
    const all = await Promise.all(clients.map((c) => c.report()))
    const refusals: Record<string, number> = {}
    for (const r of all) for (const [k, v] of Object.entries(r.refusals)) refusals[k] = (refusals[k] ?? 0) + v
    return {
      answered: all.reduce((s, r) => s + r.answered, 0),
      errors: all.reduce((s, r) => s + r.errors, 0),
      refusals,
      cpuMs: all.reduce((s, r) => s + r.cpuMs, 0),
    }
  }
  await Promise.all(clients.map((c) => c.tracked())) // nothing yet; clears
  const recorded0 = (await Promise.all(clients.map((c) => c.recorded()))).reduce((a, b) => a + b, 0)
  const c0 = await report()
  const cpu0 = total((p) => p.cpuSeconds())
  const front0 = o.front?.cpuSeconds() ?? 0
  const m0 = idleTicks()
  const peak = rssPeak(procs)
  const t0 = performance.now()
  // publishes on a fixed schedule, each acknowledged on its own (a slow one does not delay the next)
  const acked = new Map<number, number>()
  const sent: Array<Promise<void>> = []
  for (let n = 0; n < o.signals; n++) {
    const due = t0 + (n * 1000) / o.rate
    if (due > performance.now()) await sleep(due - performance.now())
    sent.push(o.publish(n).then(() => void acked.set(n, performance.timeOrigin + performance.now())))
  }
  await Promise.all(sent)
  // every follower has every signal, or 30 s pass. Counted first, cheaply: the arrival times are
  // fetched once at the end, since sending them holds the client's loop and would stamp the answers
  // still arriving late (it did: the last signal's median doubled when they were fetched as it arrived)
  for (let i = 0; i < 600; i++) {
    const recorded = (await Promise.all(clients.map((c) => c.recorded()))).reduce((a, b) => a + b, 0) - recorded0
    if (recorded >= held * o.signals) break
    await sleep(50)
  }
  const got = new Map<number, number[]>()
  let delivered = 0
  let duplicates = 0
  for (const c of clients) {
    const t = await c.tracked()
    duplicates += t.duplicates
    for (const [n, times] of t.got) {
      got.set(n, (got.get(n) ?? []).concat(times))
      delivered += times.length
    }
  }
  const wall = performance.now() - t0
  const rssAfter = total((p) => p.rssBytes())
  const rssMax = peak.stop()
  const cpu = total((p) => p.cpuSeconds()) - cpu0
  const frontCpu = (o.front?.cpuSeconds() ?? 0) - front0
  const m1 = idleTicks()
  const c1 = await report()
  // settled: once every reader has collected after the run, the followers still waiting
  const rssSettled = armed(procs, rss0s) ? await rssOnceCollected(procs, await collections(procs), COLLECTION_WAIT_MS) : null
  await Promise.all(clients.map((c) => c.stop()))
  const lat: number[] = []
  const warm: number[] = []
  for (const [n, times] of got)
    for (const at of times) {
      lat.push(at - acked.get(n)!)
      if (n >= o.rate) warm.push(at - acked.get(n)!) // after the first second
    }
  lat.sort((a, b) => a - b)
  warm.sort((a, b) => a - b)
  if (process.env.BENCH_TAIL_DETAIL === '1') console.log(tailDetail(got, acked, percentile(lat, 99)))
  const responses = c1.answered - c0.answered
  return {
    pollers: o.pollers,
    waiting: held,
    readers: readers.length,
    clientProcesses: clients.reduce((s, c) => s + c.processes, 0),
    signals: o.signals,
    rate: o.rate,
    missed: held * o.signals - delivered,
    duplicates,
    responses,
    errors: c1.errors - c0.errors,
    refusals: c1.refusals,
    p50: round(percentile(lat, 50)),
    p99: round(percentile(lat, 99)),
    max: round(lat[lat.length - 1] ?? 0),
    warmP50: round(percentile(warm, 50)),
    warmP99: round(percentile(warm, 99)),
    serverUsPerResponse: round((cpu * 1e6) / Math.max(1, responses), 1),
    ...(o.front && { frontUsPerResponse: round((frontCpu * 1e6) / Math.max(1, responses), 1), frontErrors: o.front.errors() }),
    clientUsPerResponse: round(((c1.cpuMs - c0.cpuMs) * 1000) / Math.max(1, responses), 1),
    clientCores: round((c1.cpuMs - c0.cpuMs) / wall, 2),
    machineIdle: round((m1.idle - m0.idle) / Math.max(1, m1.total - m0.total), 2),
    rssPerPollerKB: round((rss - rss0) / held / 1024, 2),
    rssHeldPerPollerKB: rssHeld === null ? null : round((rssHeld - rss0) / held / 1024, 2),
    rssAfterPerPollerKB: round((rssAfter - rss0) / held / 1024, 2),
    rssMB: { before: mb(rss0), peak: mb(rssMax), after: mb(rssAfter), settled: rssSettled === null ? null : mb(rssSettled) },
  }
}

/**
 * BENCH_TAIL_DETAIL=1: the signals that hold the run's slowest pairs (at or above its p99), each as
 * `n: min/p50/max ms (pairs over)`, to tell a few slow wake-ups (the first ones, a collection) from
 * a spread shared by all.
 */
function tailDetail(got: Map<number, number[]>, acked: Map<number, number>, p99: number): string {
  const rows: string[] = []
  for (const [n, times] of [...got].sort((a, b) => a[0] - b[0])) {
    const ls = times.map((at) => at - acked.get(n)!).sort((a, b) => a - b)
    const over = ls.filter((x) => x >= p99).length
    if (over >= ls.length / 20) rows.push(`${n}: ${round(ls[0]!)}/${round(percentile(ls, 50))}/${round(ls[ls.length - 1]!)} (${over})`)
  }
  return `signals with 5 % or more of their pairs at or above the p99 (${round(p99)} ms): ${rows.join('; ') || 'none'}`
}
