import { GROW_BYTES } from '../../libs/shared/runtime/idle-gc.js'
import { metric, type RoleProc } from './procs.js'

// The RSS figures of a fan-out bench beside its readers' own idle collections
// (libs/shared/runtime/idle-gc.ts): what a process holds once it has collected, and its peak under load.

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** Idle collections each process has made (wire_idle_gc_total). */
export const collections = (procs: RoleProc[]) => Promise.all(procs.map((p) => metric(p.url, 'wire_idle_gc_total')))

/** Whether every process grew enough since `base` (its RSS after its last collection) to arm its next idle collection. */
export const armed = (procs: RoleProc[], base: number[]) =>
  procs.every((p, i) => p.rssBytes() - base[i]! >= Math.max(GROW_BYTES, base[i]! / 10))

/**
 * Total RSS of `procs` once each has made an idle collection after `since` (their counts), asked
 * once a second (each ask is a /metrics answer: a process asked every 50 ms is never quiet enough
 * to collect); null after `waitMs`.
 */
export async function rssOnceCollected(procs: RoleProc[], since: number[], waitMs: number): Promise<number | null> {
  for (let i = 0; i < waitMs / 1000; i++) {
    await sleep(1000)
    if ((await collections(procs)).every((n, j) => n > since[j]!)) return procs.reduce((s, p) => s + p.rssBytes(), 0)
  }
  return null
}

/** Samples the total RSS of `procs` every 250 ms (from /proc, no request) until `stop()`, which returns the largest. */
export function rssPeak(procs: RoleProc[]) {
  let peak = 0
  const look = () =>
    void (peak = Math.max(
      peak,
      procs.reduce((s, p) => s + p.rssBytes(), 0),
    ))
  const timer = setInterval(look, 250)
  look()
  return {
    stop() {
      clearInterval(timer)
      look()
      return peak
    },
  }
}
