import type { DayOptions } from './day-run.js'
import { PHASES, type DaySummary, type Spread } from './day-summary.js'
import { round } from './load.js'

// bench/day.ts's printout: the measured table, then the day projected to `rate` signals/s for 24 h
// from the per-signal and per-partition figures, with its assumptions written out beside it.

const f = (n: number) => n.toLocaleString('en', { maximumFractionDigits: 2 })
const sp = (s: Spread, unit = '') => (s.n ? `${f(s.p50)} / ${f(s.p99)} / ${f(s.max)}${unit}` : '—')
const mb = (bytes: number) => f(round(bytes / 1e6, 1))

export function measuredTable(x: DaySummary, o: DayOptions): string[] {
  const i = x.inserts
  const p = x.partitions
  const w = x.sweeper
  const lines = [
    `| Measured | Figure |`,
    `|---|---|`,
    `| machine | load average ${x.machine.loadBefore} before, ${x.machine.loadAfter} after; CPU busy ${f(x.machine.busyShare * 100)} % of 2 cores; generator ${f(x.machine.generatorCoreShare * 100)} % of a core, at most ${f(x.machine.behindMax)} signals behind schedule: ${x.machine.saturated ? '**saturated** (the generator or the machine set the pace)' : 'not saturated'} |`,
    `| signals published | ${f(i.signals)} in ${f(i.seconds)} s: ${f(i.perSecond)}/s (target ${o.rate || 'as many as commit'}), ${f(i.meanBatch)} per commit |`,
    `| commit per batch, p50 / p99 / max | ${sp(i.commitMs, ' ms')} |`,
    `| CPU per signal | writer's backend ${f(i.cpuUsPerSignal.writer)} µs; whole primary ${f(i.cpuUsPerSignal.primary)} µs (backends, WAL writer and sender, checkpointer, autovacuum, the sweeper); standby ${f(i.cpuUsPerSignal.standby)} µs; generator (node) ${f(i.cpuUsPerSignal.generator)} µs |`,
    `| WAL per signal | ${f(i.walBytesPerSignal)} bytes |`,
    `| disk per million signals | ${mb(x.storage.totalPerMillion)} MB (${f(x.storage.bytesPerSignal)} bytes a signal): ${Object.entries(x.storage.perMillion).map(([k, v]) => `${k} ${mb(v)}`).join(', ')} |`,
    `| stats_buckets | ${f(x.storage.statsRows)} rows, ${mb(x.storage.statsBytes)} MB after ${o.simHours} simulated hours |`,
    `| partitions made (${f(p.width)} seq values each) | ${p.made}; p50 / p99 / max ${sp(p.createMs, ' ms')}; by the sweeper's own ensure: ${p.sweeperMade} |`,
    `| partitions dropped | ${p.dropped} (${f(p.mbPerDropped)} MB each); \`signals\` locked p50 / p99 / max ${sp(p.detachMs, ' ms')}; files removed ${sp(p.filesMs, ' ms')}; ${p.carried} rows carried (limit ${p.carryMax}) |`,
    `| partitions held (more than the carry limit must stay) | ${p.held.length ? `${p.held.join(', ')}, in ${p.heldSweeps} sweeps` : 'none'} |`,
    `| sweeps | ${w.runs}; wall p50 / p99 / max ${sp(w.wallMs, ' ms')}; a sweep with nothing to delete ${f(w.quietCpuMs)} ms of backend CPU |`,
    `| stats rollup | ${f(w.rolledUp)} signals, ${f(w.rollupCpuUsPerSignal)} µs of backend CPU each |`,
    `| row purge | ${f(w.rowsPurged)} rows deleted one by one, ${f(w.purgeCpuUsPerRow)} µs of backend CPU each |`,
    `| a sweep that dropped a partition | ${f(w.dropRunCpuMs)} ms of backend CPU (${f(w.dropExtraCpuMs)} ms more than one with nothing to delete) |`,
  ]
  lines.push('', `| While the sweeper… | samples | standby lag p50 / p99 / max, bytes | replay lag p50 / p99 / max, s | commit, ms | replica newest page, ms | replica by id, ms |`, `|---|---|---|---|---|---|---|`)
  for (const k of PHASES) {
    const y = x.phases[k]
    lines.push(`| ${k} | ${y.lagSamples} | ${sp(y.lagBytes)} | ${sp(y.lagSeconds)} | ${sp(y.commitMs)} | ${sp(y.pageMs)} | ${sp(y.byIdMs)} |`)
  }
  return lines
}

export interface DayProjection {
  rate: number
  signals: number
  partitionGb: number
  dayGb: number
  keptHours: [number, number]
  keptGb: [number, number]
  primaryCores: number
  standbyCores: number
  walMbPerSecond: number
  rowPurgeCores: number
}

/** The day at `rate` signals/s, from the per-signal and per-partition figures. */
export function projectDay(x: DaySummary, o: DayOptions, rate = 5000): { numbers: DayProjection; lines: string[] } {
  const signals = rate * 86_400
  const bytes = x.storage.bytesPerSignal
  const partitionRows = rate * 6 * 3600
  const maxTtl = Math.max(...o.shape.ttlMix.map(([t]) => t))
  const longShare = o.shape.ttlMix.filter(([t]) => t === maxTtl).reduce((a, [, s]) => a + s, 0) / o.shape.ttlMix.reduce((a, [, s]) => a + s, 0)
  // a partition goes when its last row may: the newest is 6 h younger than the oldest, and stays
  // max(24 h floor, its ttl + the grace); the oldest data kept is that much, less up to 6 h
  const oldest = 6 + Math.max(24, (maxTtl + o.graceSeconds) / 3600)
  const keptHours: [number, number] = [oldest - 6, oldest]
  const gb = (rows: number) => round((rows * bytes) / 1e9, 0)
  const filesSPerGb = x.partitions.mbPerDropped ? x.partitions.filesMs.p50 / x.partitions.mbPerDropped : 0
  const held = x.partitions.held.length > 0
  const rowPurged = held ? signals * (1 - longShare) : 0
  const numbers: DayProjection = {
    rate, signals, partitionGb: gb(partitionRows), dayGb: gb(signals), keptHours, keptGb: [gb(rate * 3600 * keptHours[0]), gb(rate * 3600 * keptHours[1])],
    primaryCores: round((x.inserts.cpuUsPerSignal.primary * rate) / 1e6, 2), standbyCores: round((x.inserts.cpuUsPerSignal.standby * rate) / 1e6, 2),
    walMbPerSecond: round((x.inserts.walBytesPerSignal * rate) / 1e6, 1), rowPurgeCores: round((x.sweeper.purgeCpuUsPerRow * rowPurged) / 86_400 / 1e6, 2),
  }
  const n = numbers
  const idx = Object.entries(x.storage.perMillion).filter(([k]) => k.startsWith('index') || k === 'tags index').reduce((a, [, v]) => a + v, 0)
  const lines = [
    `| ${f(rate)} signals/s for 24 h | Projected |`,
    `|---|---|`,
    `| signals | ${f(signals / 1e6)} M a day; a partition (6 h) ${f(partitionRows / 1e6)} M signals, ${f(n.partitionGb)} GB |`,
    `| disk | ${f(n.dayGb)} GB a day (${f(x.storage.bytesPerSignal)} bytes a signal, ${f(round((idx / 1e6) * 100 / (x.storage.totalPerMillion / 1e6), 0))} % of it indexes: ${f(round((idx * signals) / 1e6 / 1e9, 0))} GB of indexes a day); kept: ${keptHours[0]}–${keptHours[1]} h of signals, ${f(n.keptGb[0])}–${f(n.keptGb[1])} GB, plus WAL and the standby's copy |`,
    `| primary CPU for publishing | ${f(n.primaryCores)} cores (${f(x.inserts.cpuUsPerSignal.primary)} µs a signal, of which the writer's statement ${f(x.inserts.cpuUsPerSignal.writer)} µs) |`,
    `| standby CPU (replay) | ${f(n.standbyCores)} cores |`,
    `| WAL | ${f(n.walMbPerSecond)} MB/s, ${f(round((x.inserts.walBytesPerSignal * signals) / 1e9, 0))} GB a day to stream to each standby and to archive |`,
    `| partitions | 4 made a day (${f(x.partitions.createMs.p50)} ms each here); 4 dropped a day: \`signals\` locked ~${f(x.partitions.detachMs.p50)} ms each, ${f(round(filesSPerGb * n.partitionGb, 0))} s of file removal each at this disk's ${f(round(filesSPerGb, 2))} s/GB |`,
    `| stats rollup | ${f(round((x.sweeper.rollupCpuUsPerSignal * rate) / 1e6, 3))} cores |`,
    held
      ? `| row purge of held partitions | every partition is held (more than 10,000 of its ${f(partitionRows / 1e6)} M rows outlive the rest with this TTL mix): ${f(round(rowPurged / 1e6, 0))} M rows a day deleted one by one, ${f(n.rowPurgeCores)} cores, plus their WAL and vacuum, and no disk given back (a closed partition's freed space is never reused) |`
      : `| row purge | only partitions held by more than 10,000 pinned signals, the open ones and \`signals_kept\`: none in this run |`,
    `| assumptions | one writer lane; TTL mix ${o.shape.ttlMix.map(([t, s]) => `${f(s * 100)} % ${t / 3600} h`).join(', ')}; grace ${o.graceSeconds / 3600} h; ${f(o.shape.payloadBytes)}-byte payloads on average; ${f(o.shape.replyShare * 100)} % replies; one pin per ${f(o.shape.pinEvery)}; ${f(o.shape.origins)} publishing identities; no Idempotency-Keys; per-signal costs as measured at ${f(x.inserts.perSecond)}/s on partitions of ${f(x.partitions.width)} |`,
  ]
  return { numbers, lines }
}
