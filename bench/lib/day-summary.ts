import type { DayRun, SweepRun } from './day-run.js'
import { percentile, round } from './load.js'

// The simulated day's figures (bench/day.ts), from what day-run.ts recorded: per signal, per
// partition, per sweep, and the standby's lag sorted by what the sweeper was doing at the time.

export interface Spread {
  n: number
  p50: number
  p99: number
  max: number
}

const spread = (xs: number[], d = 2): Spread => {
  const a = [...xs].sort((x, y) => x - y)
  return { n: a.length, p50: round(percentile(a, 50), d), p99: round(percentile(a, 99), d), max: round(a.at(-1) ?? 0, d) }
}

/** What the sweeper was doing around a sample: its windows, most disruptive first. */
export const PHASES = ['partition dropped', 'rows purged', 'partition made', 'otherwise'] as const
export type Phase = (typeof PHASES)[number]

export interface PhaseFigures {
  lagSamples: number
  lagBytes: Spread
  lagSeconds: Spread
  commitMs: Spread
  pageMs: Spread
  byIdMs: Spread
}

export interface DaySummary {
  inserts: {
    signals: number
    seconds: number
    perSecond: number
    target: number
    meanBatch: number
    commitMs: Spread
    keyed: number
    cpuUsPerSignal: Record<'writer' | 'keys' | 'sweeper' | 'primary' | 'standby' | 'generator', number>
    walBytesPerSignal: number
  }
  machine: { loadBefore: string; loadAfter: string; busyShare: number; generatorCoreShare: number; behindMax: number; saturated: boolean }
  partitions: {
    width: number
    carryMax: number
    made: number
    createMs: Spread
    sweeperMade: number
    dropped: number
    mbPerDropped: number
    detachMs: Spread
    filesMs: Spread
    carried: number
    held: string[]
    heldSweeps: number
    waiting: string[]
    waitingSweeps: number
  }
  sweeper: {
    runs: number
    wallMs: Spread
    rolledUp: number
    rollupCpuUsPerSignal: number
    rowsPurged: number
    purgeCpuUsPerRow: number
    keysPurged: number
    keysCpuUsPerRow: number
    quietCpuMs: number
    dropRunCpuMs: number
    dropExtraCpuMs: number
  }
  storage: DayRun['storage'] & { bytesPerSignal: number }
  phases: Record<Phase, PhaseFigures>
}

/** A sweep's waiting partitions; none from a build before partitions waited (bench/day.ts runs against both). */
const waitingOf = (s: SweepRun): string[] => (s.purge.partitions as { waiting?: string[] }).waiting ?? []
const us = (ms: number, n: number) => (n ? round((ms * 1000) / n, 1) : 0)
const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0)

function phaseOf(run: DayRun): (t: number) => Phase {
  const tail = 2000 // the standby replays a sweep's WAL after it, and a reader may wait on that replay
  const windows: Array<[number, number, Phase]> = []
  for (const s of run.sweeps) {
    if (s.purge.partitions.dropped) windows.push([s.t1, s.t2 + tail, 'partition dropped'])
    else if (s.purge.expired + s.purge.removed) windows.push([s.t1, s.t2 + tail, 'rows purged'])
  }
  for (const c of run.load.creates) windows.push([c.t, c.t + c.ms + tail, 'partition made'])
  return (t) => {
    let best: Phase = 'otherwise'
    for (const [a, b, p] of windows) if (t >= a && t <= b && PHASES.indexOf(p) < PHASES.indexOf(best)) best = p
    return best
  }
}

export function summarize(run: DayRun): DaySummary {
  const { load, sweeps, cpuMs, options: o } = run
  const n = load.inserted
  const phase = phaseOf(run)
  const by = <T extends { t: number }>(xs: T[], p: Phase) => xs.filter((x) => phase(x.t) === p)
  const phases = Object.fromEntries(
    PHASES.map((p) => {
      const lag = by(run.watch.lag, p)
      const reads = by(run.watch.reads, p)
      return [
        p,
        {
          lagSamples: lag.length,
          lagBytes: spread(
            lag.map((x) => x.bytes),
            0,
          ),
          lagSeconds: spread(
            lag.map((x) => x.seconds ?? 0),
            3,
          ),
          commitMs: spread(by(load.commits, p).map((x) => x.ms)),
          pageMs: spread(reads.filter((x) => x.kind === 'page').map((x) => x.ms)),
          byIdMs: spread(reads.filter((x) => x.kind === 'byId').map((x) => x.ms)),
        },
      ]
    }),
  ) as Record<Phase, PhaseFigures>
  const drops = sweeps.filter((s) => s.purge.partitions.dropped)
  const quiet = sweeps.filter((s) => !s.purge.partitions.dropped && !(s.purge.expired + s.purge.removed) && !s.purge.keys)
  const quietCpu = percentile(
    quiet.map((s) => s.purgeCpuMs).sort((a, b) => a - b),
    50,
  )
  const purging = sweeps.filter((s) => !s.purge.partitions.dropped && s.purge.expired + s.purge.removed)
  const purged = purging.reduce((a, s) => a + s.purge.expired + s.purge.removed, 0)
  // sweeps that deleted keys and nothing else: their CPU past a quiet sweep's is the keys'
  const keying = sweeps.filter((s) => s.purge.keys && !s.purge.partitions.dropped && !(s.purge.expired + s.purge.removed))
  const keysOnly = keying.reduce((a, s) => a + s.purge.keys, 0)
  const sum = (xs: SweepRun[], f: (s: SweepRun) => number) => xs.reduce((a, s) => a + f(s), 0)
  const dropped = sum(sweeps, (s) => s.purge.partitions.dropped)
  const generatorCoreShare = round(cpuMs.generator / 1000 / run.machine.seconds, 2)
  const perSecond = round(n / load.seconds, 0)
  return {
    inserts: {
      signals: n,
      keyed: run.keys,
      seconds: round(load.seconds, 1),
      perSecond,
      target: o.rate,
      meanBatch: round(n / Math.max(1, load.batches), 1),
      commitMs: spread(load.commits.map((c) => c.ms)),
      cpuUsPerSignal: {
        writer: us(cpuMs.writer, n),
        keys: us(cpuMs.keys, n),
        sweeper: us(cpuMs.sweeper, n),
        primary: us(cpuMs.primary, n),
        standby: us(cpuMs.standby, n),
        generator: us(cpuMs.generator, n),
      },
      walBytesPerSignal: round(run.walBytes / n, 0),
    },
    machine: {
      loadBefore: run.machine.loadBefore,
      loadAfter: run.machine.loadAfter,
      busyShare: round(run.machine.busyShare, 2),
      generatorCoreShare,
      behindMax: load.behindMax,
      // the generator is one event loop: near a whole core it, not the database, set the pace
      saturated: generatorCoreShare > 0.9 || (o.rate > 0 && perSecond < 0.97 * o.rate),
    },
    partitions: {
      width: run.width,
      carryMax: run.carryMax,
      made: load.creates.length,
      createMs: spread(load.creates.map((c) => c.ms)),
      sweeperMade: sum(sweeps, (s) => s.purge.partitions.made),
      dropped,
      mbPerDropped: dropped ? round(sum(sweeps, (s) => s.purge.partitions.bytes) / dropped / 1e6, 1) : 0,
      detachMs: spread(drops.map((s) => s.purge.partitions.detachMs / s.purge.partitions.dropped)),
      filesMs: spread(drops.map((s) => s.purge.partitions.dropMs / s.purge.partitions.dropped)),
      carried: sum(sweeps, (s) => s.purge.partitions.carried),
      held: [...new Set(sweeps.flatMap((s) => s.purge.partitions.held))],
      heldSweeps: sweeps.filter((s) => s.purge.partitions.held.length).length,
      waiting: [...new Set(sweeps.flatMap((s) => waitingOf(s)))],
      waitingSweeps: sweeps.filter((s) => waitingOf(s).length).length,
    },
    sweeper: {
      runs: sweeps.length,
      wallMs: spread(
        sweeps.map((s) => s.t2 - s.t0),
        1,
      ),
      rolledUp: sum(sweeps, (s) => s.rolledUp),
      rollupCpuUsPerSignal: us(
        sum(sweeps, (s) => s.rollupCpuMs),
        sum(sweeps, (s) => s.rolledUp),
      ),
      rowsPurged: purged,
      purgeCpuUsPerRow: us(sum(purging, (s) => s.purgeCpuMs) - quietCpu * purging.length, purged),
      keysPurged: sweeps.reduce((a, s) => a + s.purge.keys, 0),
      keysCpuUsPerRow: us(keying.reduce((a, s) => a + s.purgeCpuMs, 0) - quietCpu * keying.length, keysOnly),
      quietCpuMs: round(quietCpu, 1),
      dropRunCpuMs: round(mean(drops.map((s) => s.purgeCpuMs)), 1),
      dropExtraCpuMs: round(mean(drops.map((s) => s.purgeCpuMs - quietCpu)), 1),
    },
    storage: { ...run.storage, bytesPerSignal: round(run.storage.totalPerMillion / 1e6, 0) },
    phases,
  }
}
