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
    `| CPU per signal | writer's backend ${f(i.cpuUsPerSignal.writer)} µs; Idempotency-Key lookups ${f(i.cpuUsPerSignal.keys)} µs (the keys' inserts are the writer's); sweeper's backend ${f(i.cpuUsPerSignal.sweeper)} µs; whole primary ${f(i.cpuUsPerSignal.primary)} µs (backends, WAL writer and sender, checkpointer, autovacuum, the sweeper); standby ${f(i.cpuUsPerSignal.standby)} µs; generator (node) ${f(i.cpuUsPerSignal.generator)} µs |`,
    `| WAL per signal | ${f(i.walBytesPerSignal)} bytes |`,
    `| disk per million signals | ${mb(x.storage.totalPerMillion)} MB (${f(x.storage.bytesPerSignal)} bytes a signal): ${Object.entries(
      x.storage.perMillion,
    )
      .map(([k, v]) => `${k} ${mb(v)}`)
      .join(', ')} |`,
    `| stats_buckets | ${f(x.storage.statsRows)} rows, ${mb(x.storage.statsBytes)} MB after ${o.simHours} simulated hours |`,
    `| Idempotency-Keys | ${f(i.keyed)} publishes carried one (${f(o.shape.keyShare * 100)} %); idempotency_keys ${f(x.storage.keysRows)} rows, ${mb(x.storage.keysBytes)} MB at the end (${f(x.storage.keysRows ? round(x.storage.keysBytes / x.storage.keysRows, 0) : 0)} bytes a row); ${f(w.keysPurged)} deleted one by one past their 24 h, ${f(w.keysCpuUsPerRow)} µs of sweeper CPU each |`,
    `| partitions made (${f(p.width)} seq values each) | ${p.made}; p50 / p99 / max ${sp(p.createMs, ' ms')}; by the sweeper's own ensure: ${p.sweeperMade} |`,
    `| partitions dropped | ${p.dropped} (${f(p.mbPerDropped)} MB each); \`signals\` locked p50 / p99 / max ${sp(p.detachMs, ' ms')}; files removed ${sp(p.filesMs, ' ms')}; ${p.carried} rows carried (limit ${p.carryMax}); signals_kept holds ${f(x.storage.keptRows)} at the end |`,
    `| partitions waiting (more than the carry limit must stay, until they expire) | ${p.waiting.length ? `${p.waiting.length} (${p.waiting.join(', ')}), in ${p.waitingSweeps} sweeps` : 'none'} |`,
    `| partitions held (row-purged: more than the carry limit must stay${p.waiting.length ? ', pinned' : ''}) | ${p.held.length ? `${p.held.length} (${p.held.join(', ')}), in ${p.heldSweeps} sweeps` : 'none'} |`,
    `| sweeps | ${w.runs}; wall p50 / p99 / max ${sp(w.wallMs, ' ms')}; a sweep with nothing to delete ${f(w.quietCpuMs)} ms of backend CPU |`,
    `| stats rollup | ${f(w.rolledUp)} signals, ${f(w.rollupCpuUsPerSignal)} µs of backend CPU each |`,
    `| row purge | ${f(w.rowsPurged)} rows deleted one by one, ${f(w.purgeCpuUsPerRow)} µs of backend CPU each |`,
    `| a sweep that dropped a partition | ${f(w.dropRunCpuMs)} ms of backend CPU (${f(w.dropExtraCpuMs)} ms more than one with nothing to delete) |`,
  ]
  lines.push(
    '',
    `| While the sweeper… | samples | standby lag p50 / p99 / max, bytes | replay lag p50 / p99 / max, s | commit, ms | replica newest page, ms | replica by id, ms |`,
    `|---|---|---|---|---|---|---|`,
  )
  for (const k of PHASES) {
    const y = x.phases[k]
    lines.push(
      `| ${k} | ${y.lagSamples} | ${sp(y.lagBytes)} | ${sp(y.lagSeconds)} | ${sp(y.commitMs)} | ${sp(y.pageMs)} | ${sp(y.byIdMs)} |`,
    )
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
  sweeperCores: number
  standbyCores: number
  walMbPerSecond: number
  statsGb: number
  /** idempotency_keys: a day of keys (rows, GB), deleted one by one at this rate a second. */
  keys: { rows: number; gb: number; deletesPerSecond: number }
  /** Rows a day the row purge would delete one by one: every closed partition held (a build before partitions waited). */
  rowPurged: number
}

/** File removal of a dropped partition, s/GB: bench/results/storage.md (0.93 and 4.19 GB partitions, this VM). */
const FILES_S_PER_GB: [number, number] = [0.65, 1.1]

/** The day at `rate` signals/s, from the per-signal and per-partition figures. */
export function projectDay(x: DaySummary, o: DayOptions, rate = 5000): { numbers: DayProjection; lines: string[] } {
  const signals = rate * 86_400
  const bytes = x.storage.bytesPerSignal
  const partitionRows = rate * 6 * 3600
  const maxTtl = Math.max(...o.shape.ttlMix.map(([t]) => t))
  // a partition goes once its newest rows may: they stay max(24 h floor, their ttl + the grace), and
  // are 6 h younger than its oldest, so the table holds between that and 6 h more of signals
  const newest = Math.max(24, (maxTtl + o.graceSeconds) / 3600)
  const keptHours: [number, number] = [newest, newest + 6]
  const gb = (rows: number) => round((rows * bytes) / 1e9, 0)
  const cores = (us: number) => round((us * rate) / 1e6, 2)
  // stats_buckets: a row per minute and publishing identity, kept 121 h (stats/write.ts)
  const statsRows = Math.min(o.shape.origins, rate * 60) * 60 * 121
  const statsGb = x.storage.statsRows ? round((statsRows * x.storage.statsBytes) / x.storage.statsRows / 1e9, 1) : 0
  const rowPurged = x.partitions.held.length && !x.partitions.waiting.length ? signals : 0 // every partition held: nearly every row deleted one by one
  const n: DayProjection = {
    rate,
    signals,
    partitionGb: gb(partitionRows),
    dayGb: gb(signals),
    keptHours,
    keptGb: [gb(rate * 3600 * keptHours[0]), gb(rate * 3600 * keptHours[1])],
    primaryCores: cores(x.inserts.cpuUsPerSignal.primary),
    sweeperCores: cores(x.inserts.cpuUsPerSignal.sweeper),
    standbyCores: cores(x.inserts.cpuUsPerSignal.standby),
    walMbPerSecond: round((x.inserts.walBytesPerSignal * rate) / 1e6, 1),
    statsGb,
    rowPurged,
    keys: {
      rows: signals * o.shape.keyShare,
      gb: x.storage.keysRows ? round((signals * o.shape.keyShare * x.storage.keysBytes) / x.storage.keysRows / 1e9, 0) : 0,
      deletesPerSecond: rate * o.shape.keyShare,
    },
  }
  const idx = Object.entries(x.storage.perMillion)
    .filter(([k]) => k.startsWith('index') || k === 'tags index')
    .reduce((a, [, v]) => a + v, 0)
  const lagP99 = Math.max(...PHASES.map((k) => x.phases[k].lagSeconds.p99))
  const lines = [
    `| ${f(rate)} signals/s for 24 h | Projected |`,
    `|---|---|`,
    `| signals | ${f(signals / 1e6)} M a day; a partition (6 h) ${f(partitionRows / 1e6)} M signals, ${f(n.partitionGb)} GB |`,
    `| disk | ${f(n.dayGb)} GB a day (${f(bytes)} bytes a signal, ${f(round((idx / x.storage.totalPerMillion) * 100, 0))} % of it indexes); the table holds ${keptHours[0]}–${keptHours[1]} h of signals: ${f(n.keptGb[0])}–${f(n.keptGb[1])} GB, plus WAL, free space and each standby's copy |`,
    `| primary CPU | ${f(n.primaryCores)} cores in all (${f(x.inserts.cpuUsPerSignal.primary)} µs a signal); of it the writer's statement ${f(cores(x.inserts.cpuUsPerSignal.writer))}, the sweeper ${f(n.sweeperCores)} |`,
    `| standby CPU (replay) | ${f(n.standbyCores)} cores; lag p99 ${f(lagP99)} s here, ${f(x.phases['partition dropped'].lagSeconds.p99)} s while a partition dropped |`,
    `| WAL | ${f(n.walMbPerSecond)} MB/s, ${f(round((x.inserts.walBytesPerSignal * signals) / 1e9, 0))} GB a day to stream to each standby and to archive |`,
    `| partitions | 4 made a day (${f(x.partitions.createMs.p50)} ms each here, publishes queued behind it); 4 dropped a day, \`signals\` locked ~${f(x.partitions.detachMs.p50)} ms each, then ${f(round(FILES_S_PER_GB[0] * n.partitionGb, 0))}–${f(round(FILES_S_PER_GB[1] * n.partitionGb, 0))} s of file removal in the background (${FILES_S_PER_GB.join('–')} s/GB, bench/results/storage.md; here ${f(x.partitions.filesMs.p50)} ms for ${f(x.partitions.mbPerDropped)} MB, mostly its pauses) |`,
    `| idempotency_keys | ${o.shape.keyShare ? `${f(n.keys.rows / 1e6)} M rows (24 h of keys, ${f(o.shape.keyShare * 100)} % of publishes keyed), ~${f(n.keys.gb)} GB; not partitioned: ${f(n.keys.deletesPerSecond)} rows a second deleted one by one, ${f(cores(x.sweeper.keysCpuUsPerRow * o.shape.keyShare))} cores of sweeper CPU, plus their WAL and vacuum; the lookups ${f(cores(x.inserts.cpuUsPerSignal.keys))} cores` : 'no keyed publishes'} |`,
    `| stats_buckets | ${f(round(statsRows / 1e6, 1))} M rows (a row per minute per publishing identity, 121 h kept), ${f(statsGb)} GB |`,
    rowPurged
      ? `| row purge | every closed partition held: ~${f(signals / 1e6)} M rows a day to delete one by one (all but the last 10,000 of each partition, as they pass their grace), plus their WAL, vacuum and replay, and no disk given back; the sweeper spent ${f(x.inserts.cpuUsPerSignal.sweeper)} µs a signal here, re-counting every held partition's rows to keep each sweep |`
      : `| row purge | ${x.partitions.waiting.length ? `none of the expired rows of closed partitions: ${x.partitions.waiting.length} waited for their rows and dropped whole` : 'closed partitions: none in this run'}; held ones (more than 10,000 pinned) only |`,
    `| assumptions | one writer lane; TTL mix ${o.shape.ttlMix.map(([t, sh]) => `${f(sh * 100)} % ${t / 3600} h`).join(', ')}; grace ${o.graceSeconds / 3600} h; ${f(o.shape.payloadBytes)}-byte payloads on average; ${f(o.shape.replyShare * 100)} % replies; one pin per ${f(o.shape.pinEvery)}; ${f(o.shape.origins)} publishing identities; ${f(o.shape.keyShare * 100)} % of publishes with an Idempotency-Key; per-signal costs as measured at ${f(x.inserts.perSecond)}/s on partitions of ${f(x.partitions.width)} |`,
  ]
  return { numbers: n, lines }
}
