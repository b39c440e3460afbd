import { Session } from 'node:inspector'
import { metrics } from '../metrics/index.js'
import { mallocTrim } from './malloc-trim.js'

/**
 * One memory-reducing garbage collection when a process goes quiet after its memory grew.
 *
 * V8 has a "memory reducer" for exactly this: once the mutator's allocation rate is low after a
 * burst it runs up to three GCs that compact the old generation and give back the pages V8 keeps
 * pooled. On Node 24 (V8 13.6) it never starts: "low allocation rate" also requires a low
 * *embedder* (cppgc) allocation rate, and Node allocates there so rarely that the rate reads as
 * 0 bytes/ms, which V8 turns into a mutator utilization of 0 ("high alloc"); --trace-memory-reducer
 * prints "high alloc, foreground" every 8 s of an idle process forever
 * (bench/results/rss-after-load.md, "an idle collection instead"). So after a read burst a board
 * kept 50-75 MB of pooled V8 pages and sparse old pages, and the Buffers waiting for a major GC,
 * for good.
 *
 * This does what the memory reducer would: every `tickMs` it looks at the process's CPU time and
 * RSS; when RSS grew by GROW_BYTES (and a tenth) since the last collection and the last tick was
 * quiet (CPU below QUIET_SHARE of it), it asks V8 for the collection a low-memory notification
 * makes (HeapProfiler.collectGarbage through node:inspector's in-process session: full GCs that
 * compact, release pooled pages and external memory), and then glibc's malloc_trim for the malloc
 * memory it freed (malloc-trim.ts); and once when the process has started (`afterStart`), for
 * what start-up left. At most one per `minIntervalMs`, never
 * while the process is busy, and nothing at all while RSS does not grow: its CPU is bounded by
 * one collection (a ~70 ms pause and up to ~0.2 s of CPU over V8's threads, for a 60 MB heap) per interval.
 *
 * Over the memory budget (`rssBudgetBytes`, IDLE_GC_RSS_BUDGET_MB) the wait between collections
 * is `overBudgetGapMs` (2 s) instead of the interval: the interval trades memory for CPU, and past
 * the budget memory comes first. A read burst grows V8's old generation to its limit, a multiple of
 * what is live, and that promoted garbage stayed until the interval ran out
 * (bench/results/rss-after-load.md, "a memory budget for the idle collection"). Still never while
 * busy, and never without growth: a process whose live data is over the budget is not collected
 * again and again.
 */
export interface IdleGcOptions {
  /** How often it looks (TICK_MS): a collection starts within one or two of these after a burst ends. */
  tickMs?: number
  minIntervalMs: number
  /** RSS past which a quiet tick collects after `overBudgetGapMs` instead of `minIntervalMs` (0: no budget). */
  rssBudgetBytes?: number
  /** The least time between two collections while RSS is over the budget. */
  overBudgetGapMs?: number
  /** Sources, for tests: CPU microseconds used, RSS bytes, now in ms, and the collection itself. */
  cpuMicros?: () => number
  rssBytes?: () => number
  now?: () => number
  collect?: () => Promise<void>
}

export interface IdleGc {
  /** One look (the timer calls it every tickMs): resolves true when it collected. */
  tick(): Promise<boolean>
  /**
   * The process has started: the next quiet tick collects however little RSS grew since this
   * collector started. A role's main starts it after loading its modules, so what start-up left
   * (the garbage of compiling them and of migrations, V8's new space grown meanwhile, malloc's
   * freed buffers: ~15 MB of a fresh single process) would otherwise count only when more than
   * GROW_BYTES and a tenth of RSS came on top of it.
   */
  afterStart(): void
  /** Collections made so far and the CPU they took (ms, measured around each; also wire_idle_gc_* on /metrics). */
  readonly stats: { collections: number; cpuMs: number }
  stop(): void
}

/**
 * A memory-reducing collection (V8's LowMemoryNotification) through an in-process inspector
 * session, then malloc's free pages given back (malloc-trim.ts: the Buffers that collection freed
 * left holes in glibc's heap that free() never returns).
 */
export function lowMemoryCollect(): Promise<void> {
  const s = new Session()
  s.connect()
  // disconnected only after the callback returns: V8 runs it holding the lock its agent's destructor takes
  return new Promise<void>((resolve, reject) =>
    s.post('HeapProfiler.collectGarbage', (err) =>
      setImmediate(() => {
        s.disconnect()
        if (err) return reject(err)
        mallocTrim?.()
        resolve()
      }),
    ),
  )
}

/** The least time between two collections while RSS is over the budget: at most ~0.2 s of CPU per 2 s. */
const OVER_BUDGET_GAP_MS = 2000
/**
 * How often it looks at the process's CPU time (a few microseconds): a quiet tick comes 0.25-0.5 s
 * after a burst ends, so its memory is given back within about half a second.
 */
const TICK_MS = 250

/** RSS growth since the last collection that arms the next one (besides a tenth of that RSS). */
export const GROW_BYTES = 16 * 2 ** 20
/** A tick is quiet when the process used less CPU than this share of it. */
const QUIET_SHARE = 0.05
const cpuNow = () => {
  const u = process.cpuUsage()
  return u.user + u.system
}

export function startIdleGc(o: IdleGcOptions): IdleGc {
  const cpuMicros = o.cpuMicros ?? cpuNow
  const rssBytes = o.rssBytes ?? (() => process.memoryUsage.rss())
  const now = o.now ?? Date.now
  const collect = o.collect ?? lowMemoryCollect
  const budget = o.rssBudgetBytes ?? 0
  const overBudgetGapMs = Math.min(o.overBudgetGapMs ?? OVER_BUDGET_GAP_MS, o.minIntervalMs)
  const stats = { collections: 0, cpuMs: 0 }
  let lastCpu = cpuMicros()
  let lastTick = now()
  let base = rssBytes() // RSS right after the last collection (or at start)
  let lastCollect = -Infinity
  let running = false
  let startUpLeft = false

  const tick = async () => {
    const [cpu, t] = [cpuMicros(), now()]
    const busyShare = (cpu - lastCpu) / 1000 / Math.max(1, t - lastTick)
    ;[lastCpu, lastTick] = [cpu, t]
    if (running || busyShare >= QUIET_SHARE || t - lastCollect < overBudgetGapMs) return false
    const rss = rssBytes()
    if (!startUpLeft && rss < base + Math.max(GROW_BYTES, base / 10)) return false
    if (t - lastCollect < o.minIntervalMs && !(budget > 0 && rss > budget)) return false
    running = true
    try {
      const c0 = cpuMicros()
      await collect()
      const ms = (cpuMicros() - c0) / 1000
      stats.cpuMs += ms
      stats.collections++
      metrics.idleGcs.inc()
      metrics.idleGcCpuSeconds.inc(ms / 1000)
    } finally {
      running = false
      startUpLeft = false
      lastCollect = now()
      base = rssBytes()
      lastCpu = cpuMicros() // the collection's own CPU does not make the next tick busy
      lastTick = now()
    }
    return true
  }
  const timer = setInterval(() => void tick().catch(() => {}), o.tickMs ?? TICK_MS)
  timer.unref()
  return { tick, stats, afterStart: () => void (startUpLeft = true), stop: () => clearInterval(timer) }
}
