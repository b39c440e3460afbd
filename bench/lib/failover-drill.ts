import { followerKinds, follow, publishers, type FollowerResult, type PublishRecord } from './failover-load.js'
import { type Cleanup, pgUrl, sql, startPrimary, startStandby, tcpSwitch } from './pg-cluster.js'
import { freePort, startRedis, startRole, type RoleProc } from './procs.js'

// A failover drill (docs/operations.md "Failover"): a primary and a streaming standby of their own,
// a TCP switch where DNS or a pooler stands, the fleet as real processes (writer, two readers,
// agents, sweeper, a private Redis), publishers and followers of every kind. Mid-run the primary is
// killed (`immediate`), the standby promoted and the switch repointed, with no step in between.
// Asynchronous mode first cuts the standby's replication link `lagMs` before the kill, so the
// primary acknowledges (and readers serve) signals the standby never receives.

export interface DrillOptions {
  mode: 'sync' | 'async'
  /** PostgreSQL ports for the primary and the standby (the rest is free ports). */
  ports: [number, number]
  publishers: number
  perSecond: number
  /** Publishing before the kill, and after it. */
  beforeMs: number
  afterMs: number
  lagMs: number
  /** Progress lines (the benchmark prints them). */
  note?: (line: string) => void
}

export interface DrillResult {
  mode: 'sync' | 'async'
  attempted: number
  acknowledged: number
  /** Answers by status (200, 503, …, timeout, network). */
  statuses: Record<string, number>
  /** Acknowledged before the kill but not on the promoted board. */
  lost: number
  /** follower × signal pairs: a signal on the promoted board a follower never received. */
  gaps: number
  followers: number
  caughtUp: number
  /** Signals followers received that the promoted board does not hold (served from the lost primary). */
  lostButServed: number
  /** From the kill to the first publish the promoted primary acknowledged. */
  outageSeconds: number
  /** 503s without Retry-After or without `outcome`. */
  badUnavailable: number
  durabilityBefore: boolean | null
  followerErrors: number
  wentBack: number
  /** Publish latency (ms, median and 99th percentile) of the acknowledged publishes before the kill. */
  p50: number
  p99: number
  /** Acknowledged publishes per second before the kill. */
  ackPerSecond: number
  /** Writer CPU (user + system) per acknowledged publish before the kill, ms. */
  writerCpuMsPerPublish: number
  /** From the first 503 to the last one answered. */
  unavailableSeconds: number
  fleetAlive: boolean
  results: FollowerResult[]
}

async function role(cleanup: Cleanup, name: 'writer' | 'reader' | 'agents' | 'sweeper', env: Record<string, string>): Promise<RoleProc> {
  const r = await startRole(name, await freePort(), env)
  cleanup.add(() => r.child.kill('SIGKILL'))
  return r
}

export async function failoverDrill(cleanup: Cleanup, o: DrillOptions): Promise<DrillResult> {
  const note = o.note ?? (() => {})
  const t = Date.now()
  const primary = await startPrimary(cleanup, o.ports[0], o.mode)
  const link = await tcpSwitch(cleanup, await freePort(), primary.port) // the standby's way to the primary
  const front = await tcpSwitch(cleanup, await freePort(), primary.port) // where DNS or a pooler stands
  const env = {
    DATABASE_URL: pgUrl(front.port),
    REDIS_URL: await startRedis(cleanup),
    WIRE_PG_SCHEMA: 'wire',
    PUBLISH_RATE_LIMIT_MAX: '0',
    PUBLISH_ADDRESS_RATE_LIMIT_MAX: '0',
    PUBLISH_ATTEMPT_RATE_LIMIT_MAX: '0', // 16 publishers share one address here
    NEW_IDENTITY_RATE_LIMIT_MAX: '0',
    READ_RATE_LIMIT_MAX: '0',
    LOG_LEVEL: 'warn',
  }
  // the writer migrates while the standby is copied; in sync mode the migration waits for the standby
  const [standby, writer] = await Promise.all([startStandby(cleanup, o.ports[1], link.port), role(cleanup, 'writer', env)])
  const readerEnv = { ...env, DATABASE_REPLICA_URL: standby.url }
  const [reader1, reader2, ...others] = await Promise.all([
    role(cleanup, 'reader', readerEnv),
    role(cleanup, 'reader', readerEnv),
    role(cleanup, 'agents', readerEnv),
    role(cleanup, 'sweeper', env),
  ])
  const readers = [reader1!, reader2!] as const
  const ready = (await (await fetch(`${writer.url}/readyz`)).json()) as { durability?: { synchronousStandby: boolean } }
  note(`${o.mode}: cluster, standby and fleet up in ${Date.now() - t} ms; durability ${JSON.stringify(ready.durability)}`)

  let finalHead = Infinity
  const t0 = Date.now()
  const followers = followerKinds([readers[0].url, readers[1].url]).map((spec) => follow(spec, (c) => c >= finalHead))
  await new Promise((r) => setTimeout(r, 300)) // every follower holds its starting cursor
  let stopped = false
  const cpu0 = writer.cpuSeconds()
  const load = publishers(writer.url, o.publishers, o.perSecond, t0, () => stopped)

  await new Promise((r) => setTimeout(r, o.beforeMs - (o.mode === 'async' ? o.lagMs : 0)))
  if (o.mode === 'async') {
    link.cut() // from here the primary acknowledges what the standby never receives
    await new Promise((r) => setTimeout(r, o.lagMs))
  }
  const cpuBefore = writer.cpuSeconds() - cpu0
  await primary.kill()
  const killAt = Date.now() - t0 // from here nothing the old primary acknowledges
  await standby.promote()
  front.point(standby.port)
  note(`${o.mode}: primary killed at ${killAt} ms, standby promoted and switched at ${Date.now() - t0} ms`)
  await new Promise((r) => setTimeout(r, o.afterMs))
  stopped = true
  const records = await load

  const board = await sql<{ id: string; seq: string }>(standby.url, `select id, seq from wire.signals order by seq`)
  if (process.env.DRILL_DEBUG) note(`${o.mode}: board ${board.length} signals, seq ${board[0]?.seq}..${board.at(-1)?.seq}`)
  finalHead = Number((await sql<{ seq: string }>(standby.url, `select seq from wire.feed_head`))[0]!.seq)
  const stopAt = Date.now() + 20_000
  note(`${o.mode}: publishing stopped; final head ${finalHead}`)
  const results = await Promise.race([
    Promise.all(followers),
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error('followers did not catch up in 20 s')), stopAt - Date.now())),
  ])
  const fleetAlive = [writer, ...readers, ...others].every((p) => p.child.exitCode === null && p.child.signalCode === null)
  return summarise(o, records, board, results, { killAt, cpuBefore }, ready.durability?.synchronousStandby ?? null, fleetAlive)
}

function summarise(
  o: DrillOptions,
  records: PublishRecord[],
  board: Array<{ id: string }>,
  results: FollowerResult[],
  { killAt, cpuBefore }: { killAt: number; cpuBefore: number },
  durabilityBefore: boolean | null,
  fleetAlive: boolean,
): DrillResult {
  const onBoard = new Set(board.map((r) => r.id))
  const acked = records.filter((r) => r.status === 200)
  const statuses: Record<string, number> = {}
  for (const r of records) statuses[r.status] = (statuses[r.status] ?? 0) + 1
  // the first publish sent after the kill and acknowledged (by the promoted primary)
  const firstAfter = acked.filter((r) => r.sent >= killAt).sort((a, b) => a.answered - b.answered)[0]
  const before = acked.filter((r) => r.answered < killAt)
  const unavailable = records.filter((r) => r.status === 503).sort((a, b) => a.answered - b.answered)
  const lat = before.map((r) => r.answered - r.sent).sort((a, b) => a - b)
  const seqOf = new Map(board.map((r) => [r.id, (r as { seq?: string }).seq]))
  let gaps = 0
  let lostButServed = 0
  let caughtUp = 0
  for (const f of results) {
    const seen = new Set(f.seen)
    const missing = board.filter((r) => !seen.has(r.id)).length
    gaps += missing
    lostButServed += f.seen.filter((id) => !onBoard.has(id)).length
    if (missing === 0) caughtUp++
    else if (process.env.DRILL_DEBUG) {
      const miss = board.filter((r) => !seen.has(r.id)).map((r) => Number(seqOf.get(r.id)))
      process.stderr.write(`${f.name} missed ${missing}: seqs ${miss.slice(0, 5).join(',')} … ${miss.slice(-3).join(',')}\n`)
      const near = f.pages.filter(([from, next]) => next >= miss[0]! - 5 && from <= miss.at(-1)! + 5)
      process.stderr.write(`pages around: ${JSON.stringify(near.slice(0, 12))} kill at ${killAt}\n`)
    }
  }
  return {
    mode: o.mode,
    attempted: records.length,
    acknowledged: acked.length,
    statuses,
    lost: acked.filter((r) => !onBoard.has(r.id!)).length,
    gaps,
    followers: results.length,
    caughtUp,
    lostButServed,
    outageSeconds: firstAfter ? (firstAfter.answered - killAt) / 1000 : NaN,
    badUnavailable: records.filter((r) => r.status === 503 && (!r.retryAfter || !r.outcome)).length,
    durabilityBefore,
    followerErrors: results.reduce((n, f) => n + f.errors, 0),
    wentBack: results.reduce((n, f) => n + f.wentBack, 0),
    p50: lat[Math.floor(lat.length / 2)] ?? NaN,
    p99: lat[Math.min(lat.length - 1, Math.floor(lat.length * 0.99))] ?? NaN,
    ackPerSecond: before.length / (killAt / 1000),
    writerCpuMsPerPublish: (cpuBefore * 1000) / Math.max(1, before.length),
    unavailableSeconds: unavailable.length ? (unavailable.at(-1)!.answered - unavailable[0]!.answered) / 1000 : 0,
    fleetAlive,
    results,
  }
}
