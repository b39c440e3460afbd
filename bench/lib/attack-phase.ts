import { fork } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { projectPath } from '../../libs/shared/paths.js'
import type { honestLoad, Kind } from './honest-load.js'
import { percentile, round } from './load.js'
import { metric, type RoleProc } from './procs.js'

// One phase of bench/aggregator-attack.ts: an attacker (or none) beside the honest clients for a
// while, and one row of figures from that window.

export interface AttackSettings {
  /** Hostile boards per attack (stall: stallBoards, each stalling after stallBytes). */
  boards: number
  stallBoards: number
  stallBytes: number
  /** Proxied requests at once in a `+proxy` phase. */
  concurrency: number
}

interface AttackReport {
  statuses: Record<string, number>
  bytes: number
  authorities: string[]
  pages: number
}

/** Starts one attacker process (bench/lib/attacker-proc.ts) and waits until its boards are registered. */
async function startAttacker(agg: string, phase: string, s: AttackSettings) {
  const [mode, proxy] = phase.split('+')
  const data = {
    agg,
    mode,
    boards: mode === 'stall' ? s.stallBoards : s.boards,
    concurrency: proxy === 'proxy' ? s.concurrency : 0,
    addresses: 4,
    cycleMs: 3000,
    hugeBytes: 150 * 1024 * 1024,
    stallBytes: s.stallBytes,
  }
  const child = fork(projectPath('dist/bench/lib/attacker-proc.js'), [JSON.stringify(data)], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  await new Promise<void>((resolve, reject) => {
    child.once('message', () => resolve())
    child.once('exit', (code) => reject(new Error(`attacker ${phase} exited with ${code}`)))
  })
  return {
    stop: () =>
      new Promise<AttackReport>((resolve) => {
        child.once('message', (m: { report: AttackReport }) => resolve(m.report))
        child.send({ cmd: 'stop' })
      }),
  }
}

export const loadavg = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')
const mib = (bytes: number) => round(bytes / 2 ** 20)
const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length ? `${round(percentile(s, 50))} / ${round(percentile(s, 99))}` : '–'
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

export const HEADER =
  '| aggregator | phase | followers via the aggregator: publish → delivered p50 / p99 ms | directly on the board (the machine) | proxied reads p50 / p99 ms | searches | publish → searchable | honest non-2xx | ' +
  'aggregator RSS MiB (start → max) | its heap used / external MiB (end) | its event-loop delay p99 / max ms | aggregator CPU (of one core) | aggregator CPU ms per honest op | ' +
  "hostile rows indexed, most of one board | the attacker's requests (status), bytes, pages followed | load (end) |\n" +
  '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|'

/**
 * Runs `phase` for `seconds` against `agg`: `calm` is no attack; `<kind>` registers hostile boards
 * of that kind for the follower; `<kind>+proxy` also sends proxied requests to them. Returns the
 * table row. With `trace`, prints the aggregator's memory every 5 s (those scrapes reset the
 * event-loop figures, which then cover the last 5 s).
 */
export async function runPhase(o: {
  build: string
  agg: RoleProc
  adminToken: string
  honest: ReturnType<typeof honestLoad>
  phase: string
  seconds: number
  attack: AttackSettings
  trace: boolean
  out: (s: string) => void
}) {
  const { agg, honest, phase } = o
  const attacker = phase.startsWith('calm') ? null : await startAttacker(agg.url, phase, o.attack)
  await metric(agg.url, 'nodejs_eventloop_lag_max_seconds') // a scrape resets the event loop's histogram: this phase's from here
  const t0 = Date.now()
  const cpu0 = agg.cpuSeconds()
  const rss0 = agg.rssBytes()
  let rssMax = rss0
  const watch = setInterval(() => (rssMax = Math.max(rssMax, agg.rssBytes())), 250)
  const scrape = async () => {
    const text = await (await fetch(`${agg.url}/metrics`)).text().catch(() => '')
    return (name: string) => Number(new RegExp(`^${name} ([-0-9.e+]+)$`, 'm').exec(text)?.[1])
  }
  const trace = o.trace
    ? setInterval(async () => {
        const v = await scrape()
        o.out(
          `  ${o.build} ${phase} +${round((Date.now() - t0) / 1000)} s: RSS ${mib(agg.rssBytes())} MiB, heap used ${mib(v('nodejs_heap_size_used_bytes'))}, external ${mib(v('nodejs_external_memory_bytes'))}`,
        )
      }, 5000)
    : undefined
  await sleep(o.seconds * 1000)
  clearInterval(watch)
  clearInterval(trace)
  const t1 = Date.now()
  const cpu = agg.cpuSeconds() - cpu0
  const v = await scrape()
  const lag = `${round(v('nodejs_eventloop_lag_p99_seconds') * 1000)} / ${round(v('nodejs_eventloop_lag_max_seconds') * 1000)}`
  const heap = `${mib(v('nodejs_heap_size_used_bytes'))} / ${mib(v('nodejs_external_memory_bytes'))}`
  const load = loadavg()
  const inside = (k: Kind) => honest.samples[k].filter((s) => s.at >= t0 && s.at < t1).map((s) => s.ms)
  const ops = (['followed', 'read', 'search', 'indexed'] as const).reduce((n, k) => n + inside(k).length, 0)
  const failed = honest.failures.filter((f) => f.at >= t0 && f.at < t1)
  const failedBy = Object.entries(
    failed.reduce<Record<string, number>>((m, f) => ((m[`${f.kind} ${f.status}`] = (m[`${f.kind} ${f.status}`] ?? 0) + 1), m), {}),
  )
  let hostile = '–'
  let attack = '–'
  if (attacker) {
    const rep = await attacker.stop()
    let most = 0
    let marked = 0
    for (const a of rep.authorities) {
      const b = (
        (await (await fetch(`${agg.url}/registry/boards/${a}`)).json()) as { board?: { indexed: { rows: number }; overQuota: unknown } }
      ).board
      most = Math.max(most, b?.indexed.rows ?? 0)
      if (b?.overQuota) marked++
      await fetch(`${agg.url}/registry/boards/${a}`, { method: 'DELETE', headers: { authorization: `Bearer ${o.adminToken}` } })
    }
    hostile = `${most} (${marked} of ${rep.authorities.length} boards marked)`
    attack = `${
      Object.entries(rep.statuses)
        .map(([k, n]) => `${n}×${k}`)
        .join(' ') || 'none'
    }; ${mib(rep.bytes)} MiB; ${rep.pages}`
    await sleep(Math.min(2000, o.seconds * 1000)) // the attack's leftovers drain before the next phase
  }
  return (
    `| ${o.build} | ${phase} | ${stats(inside('followed'))} | ${stats(inside('direct'))} | ${stats(inside('read'))} | ${stats(inside('search'))} | ${stats(inside('indexed'))} | ` +
    `${failed.length}${failedBy.length ? ` (${failedBy.map(([k, n]) => `${n}× ${k}`).join(', ')})` : ''} | ${mib(rss0)} → ${mib(rssMax)} | ${heap} | ${lag} | ` +
    `${round((cpu / o.seconds) * 100)} % | ${round((cpu * 1000) / Math.max(1, ops), 2)} | ${hostile} | ${attack} | ${load} |`
  )
}
