import type { RoleProc } from '../procs.js'
import type { NetFleet, RoleName } from './fleet.js'
import { underLoad, type Kept, type Load } from './promise.js'

// One drill at a time on a running fleet (fleet.ts), under the promise's load (promise.ts): steady
// load, the fault, until an operator could see it (a metric, /readyz, a log line) and the fleet
// went on around it, the fault healed, until a publish made after the heal has reached every
// follower, then the load stops and the board is checked. Every wait is on state, with a deadline.

/** How long the fleet gets to show it goes on around a fault, or comes back after it. */
export const WITHIN_MS = 20_000

export interface Check {
  what: string
  ok: boolean
}

export interface Drill {
  name: string
  /** The role an operator would look at. */
  role: RoleName
  /** Makes the fault; resolves to what heals it. */
  fault(f: NetFleet): Promise<() => unknown>
  /** What an operator sees of the fault now (metric, /readyz), or null while nothing shows; none: nothing is expected to show. */
  shows?(f: NetFleet, since: number): Promise<string | null>
  /** Holds the fault until the fleet has shown it goes on around it; records what it checked. */
  meanwhile?(f: NetFleet, load: Load, check: (c: Check) => void): Promise<void>
  /** After the heal and the generic recovery: the drill's own checks (jobs resumed, …). */
  after?(f: NetFleet, load: Load, check: (c: Check) => void): Promise<void>
}

export interface DrillReport extends Kept {
  drill: string
  /** From the fault to the first sign an operator could see; null: none within the deadline. */
  detectS: number | null
  /** From the heal to a publish made after it reaching every follower; null: not within the deadline. */
  recoverS: number | null
  /** What the operator saw: the sign, /readyz, and the first warning logged since the fault. */
  saw: string
  checks: Check[]
  /** Every role alive and ready once it is over. */
  ready: boolean
}

export interface Deadlines {
  /** How long a fault may take to show (and the fleet to go on around it). */
  detectMs: number
  /** How long the fault is held at least, shown or not. */
  holdMs: number
  recoverMs: number
}

export async function runDrill(f: NetFleet, d: Drill, ms: Deadlines): Promise<DrillReport> {
  const checks: Check[] = []
  const check = (c: Check) => checks.push(c)
  const r = await underLoad(f, async (load) => {
    const since = Date.now()
    const heal = await d.fault(f)
    let sign: string | null = null
    let detected: number | null = null
    let saw: string
    try {
      const held = load.timeUntil(() => Date.now() - since >= ms.holdMs, ms.holdMs + 1000)
      const shows = d.shows
      if (shows) detected = await load.timeUntil(async () => (sign = await shows(f, since)) !== null, ms.detectMs)
      await d.meanwhile?.(f, load, check)
      await held
      saw = [
        sign ?? 'nothing shown',
        `/readyz ${await readyz(f.roles[d.role])}`,
        firstWarning(f.roles[d.role], since) ?? 'no warning logged',
      ].join('; ')
    } finally {
      await heal() // also when the drill failed, so the next one starts on a whole fleet
    }
    const healedAt = load.now()
    const recovered = await load.timeUntil(() => {
      const after = load.records.find((p) => p.sent >= healedAt && p.status === 200)
      return after !== undefined && load.followersAt(after)
    }, ms.recoverMs)
    await d.after?.(f, load, check)
    return { detectS: detected === null ? null : detected / 1000, recoverS: recovered === null ? null : recovered / 1000, saw }
  })
  const ready = (
    await Promise.all(Object.values(f.roles).map((role) => until(async () => (await readyz(role)) === '200', ms.recoverMs)))
  ).every(Boolean)
  return { drill: d.name, ...r, checks, ready }
}

/** /readyz's status, or what went wrong asking (within 3 s, deploy/k8s's probe timeout: a probe that hangs is a finding). */
export async function readyz(role: RoleProc): Promise<string> {
  if (role.child.exitCode !== null || role.child.signalCode !== null) return 'process gone'
  return fetch(`${role.url}/readyz`, { signal: AbortSignal.timeout(3000) }).then(
    (res) => String(res.status),
    (err: Error) => (err.name === 'TimeoutError' ? 'no answer in 3 s' : 'refused'),
  )
}

/** The sum of a metric's series whose labels contain `labels` (bench/lib/procs.ts's metric, with a deadline); NaN when /metrics does not answer. */
export async function metric(role: RoleProc, name: string, labels = ''): Promise<number> {
  const text = await fetch(`${role.url}/metrics`, { signal: AbortSignal.timeout(2000) }).then(
    (r) => r.text(),
    () => null,
  )
  if (text === null) return NaN
  let sum = 0
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:]+)(\{[^}]*\})? ([-0-9.e+]+)$/.exec(line)
    if (m && m[1] === name && (m[2] ?? '').includes(labels)) sum += Number(m[3])
  }
  return sum
}

/** The first line at warn or above that `role` logged since `since` (epoch ms), as `msg (err)`. */
export function firstWarning(role: RoleProc, since: number): string | null {
  for (const line of role.logTail().split('\n')) {
    if (!line.startsWith('{')) continue
    try {
      const l = JSON.parse(line) as { level?: number; time?: number; msg?: string; err?: { message?: string } | string }
      if ((l.level ?? 0) >= 40 && (l.time ?? 0) >= since) {
        const err = typeof l.err === 'string' ? l.err : l.err?.message
        return `log: "${l.msg}"${err ? ` (${err.slice(0, 80)})` : ''}`
      }
    } catch {
      /* a partial line at the tail's start */
    }
  }
  return null
}

const until = async (check: () => Promise<boolean>, ms: number) => {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 100))) if (await check()) return true
  return false
}
