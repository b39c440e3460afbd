import { readdirSync, readFileSync } from 'node:fs'

// CPU time from /proc, for CPU per operation: one process, a whole PostgreSQL cluster (the postmaster,
// its live children and the children it has reaped: backends, autovacuum workers, WAL senders), and
// the machine. Clock ticks are 10 ms (USER_HZ 100), so measure over many operations.

const TICK_MS = 10

/** Fields of /proc/<pid>/stat from the 3rd (state) on; null when the process is gone. */
function statFields(pid: number): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  } catch {
    return null
  }
}

/** utime + stime of a process so far, ms (0 once it is gone). */
export function processCpuMs(pid: number): number {
  const f = statFields(pid)
  return f ? (Number(f[11]) + Number(f[12])) * TICK_MS : 0
}

/** The postmaster's pid, from its data directory. */
export const postmasterPid = (dataDir: string): number => Number(readFileSync(`${dataDir}/postmaster.pid`, 'utf8').split('\n')[0])

/**
 * CPU of a whole PostgreSQL cluster so far, ms: the postmaster's own and its reaped children's
 * (cutime + cstime: backends and autovacuum workers that have exited), plus every live child's.
 */
export function clusterCpuMs(postmaster: number): number {
  const own = statFields(postmaster)
  if (!own) return 0
  let ms = (Number(own[11]) + Number(own[12]) + Number(own[13]) + Number(own[14])) * TICK_MS
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue
    const f = statFields(Number(d))
    if (f && Number(f[1]) === postmaster) ms += (Number(f[11]) + Number(f[12])) * TICK_MS
  }
  return ms
}

/** The machine's busy and total CPU ticks so far (/proc/stat). */
export function machineTicks(): { busy: number; total: number } {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number)
  const total = f.reduce((a, b) => a + b, 0)
  return { busy: total - f[3]! - (f[4] ?? 0), total }
}

/** /proc/loadavg's three load averages, as written there. */
export const loadAverage = (): string => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')
