import { follow, followerKinds, publishers, type FollowerResult, type FollowerSpec, type PublishRecord } from '../failover-load.js'
import { sql } from '../pg-cluster.js'
import type { NetFleet } from './fleet.js'

// The promise every drill checks, under the same load: publishers on the writer and followers of
// every kind on the two readers (bench/lib/failover-load.ts) and through the aggregator (its proxy
// of the board, its search), each keeping only `nextCursor`. When the load stops, the board on the
// primary is the truth (the aggregator's index, for its search's followers): an acknowledged
// publish missing from it is lost (or, from the index, not indexed); a signal on it above where a
// follower started, which the follower never received, is skipped; a follower that does not reach
// the head in time has not caught up.

/** A follower of the load: of the board (its cursor is the board's seq) or of the aggregator's search (the index's). */
interface LoadFollower extends FollowerSpec {
  search?: boolean
}
/** The name of the load's follower of the board through the aggregator's proxy. */
export const PROXY_FOLLOWER = "through the aggregator's proxy"

/** The aggregator's schema (AGGREGATOR_PG_SCHEMA's default), where the drill reads its index. */
const AGG = 'aggregator'

export interface Load {
  /** ms since the load started. */
  now(): number
  /** Every answer so far. */
  readonly records: readonly PublishRecord[]
  /** Resolves with the ms `check` took to hold, or null past `withinMs`; checks every 50 ms. */
  timeUntil(check: () => Promise<boolean> | boolean, withinMs: number): Promise<number | null>
  /** True once every follower has `p` (a board's follower: its cursor is at or past p's seq; the search's: it received p). */
  followersAt(p: PublishRecord): boolean
  /** How far the followers' cursors moved so far, all together (to see them move during a fault); `only`: those whose name contains it. */
  progress(only?: string): number
}

export interface Kept {
  publishes: number
  acknowledged: number
  /** Answers other than 200, by status. */
  refused: Record<string, number>
  lost: number
  /** follower × signal pairs: on the board, above the follower's start, never received. */
  skipped: number
  followers: number
  caughtUp: number
  wentBack: number
  /** Acknowledged publishes the aggregator's index does not hold once it caught up. */
  unindexed: number
}

const LOAD = { publishers: 4, perSecond: 10 }

export async function underLoad<T>(f: NetFleet, body: (load: Load) => Promise<T>): Promise<T & Kept> {
  const t0 = Date.now()
  const readers: [string, string] = [f.roles.reader1.url, f.roles.reader2.url]
  const agg = f.roles.aggregator.url
  const specs: LoadFollower[] = [
    ...followerKinds(readers),
    { name: PROXY_FOLLOWER, reader: () => `${agg}/sw/${f.authority}`, limit: 100, wait: 5 },
    { name: "the aggregator's search", reader: () => agg, path: '/search/signals', limit: 100, wait: 5, search: true },
  ]
  const cursors = specs.map(() => -1)
  const starts = specs.map(() => -1)
  const seen = specs.map(() => new Set<string>())
  let finalHead = Infinity
  let finalIndexHead = Infinity
  const stop = new AbortController()
  const followers = specs.map((spec, i) =>
    follow(
      {
        ...spec,
        onCursor: (c) => ((cursors[i] = c), starts[i]! < 0 && (starts[i] = c)),
        onSeen: spec.search ? (id) => seen[i]!.add(id) : undefined,
      },
      (c) => c >= (spec.search ? finalIndexHead : finalHead),
      stop.signal,
    ),
  )
  const timeUntil = async (check: () => Promise<boolean> | boolean, withinMs: number) => {
    const from = Date.now()
    for (;;) {
      if (
        await Promise.resolve()
          .then(check)
          .catch(() => false)
      )
        return Date.now() - from
      if (Date.now() - from > withinMs) return null
      await new Promise((r) => setTimeout(r, 50))
    }
  }
  if ((await timeUntil(() => starts.every((s) => s >= 0), 30_000)) === null) throw new Error('the followers did not start')
  const records: PublishRecord[] = []
  let stopped = false
  const reply = (p: number, i: number) => ({ $type: 'reply', $refId: f.threadId, p, i })
  const load = publishers(f.roles.writer.url, LOAD.publishers, LOAD.perSecond, t0, () => stopped, records, reply)
  const acked = () => records.filter((r) => r.status === 200)
  const view: Load = {
    now: () => Date.now() - t0,
    records,
    timeUntil,
    followersAt: (p) => specs.every((spec, i) => (spec.search ? seen[i]!.has(p.id!) : cursors[i]! >= p.cursor!)),
    progress: (only) => cursors.reduce((n, c, i) => n + (only && !specs[i]!.name.includes(only) ? 0 : Math.max(0, c - starts[i]!)), 0),
  }
  const boardStarts = () => Math.min(...starts.filter((_, i) => !specs[i]!.search))
  const indexStarts = () => Math.min(...starts.filter((_, i) => specs[i]!.search))
  try {
    // steady first: publishes acknowledged and followed before any fault
    if ((await timeUntil(() => acked().length >= 5 && view.followersAt(acked()[4]!), 30_000)) === null)
      throw new Error('no steady load before the fault')
    const result = await body(view)
    stopped = true
    await load
    const board = await sql<{ id: string; seq: string }>(
      f.primaryUrl,
      `select id, seq from wire.signals where seq > ${boardStarts()} order by seq`,
    )
    finalHead = Number((await sql<{ seq: string }>(f.primaryUrl, 'select seq from wire.feed_head'))[0]!.seq)
    // the aggregator has indexed the board up to its head: the index's head is the search followers' end
    const indexed = `select feed_cursor from ${AGG}.registered_boards where authority = '${f.authority}'`
    await timeUntil(
      async () => Number((await sql<{ feed_cursor: string }>(f.primaryUrl, indexed))[0]?.feed_cursor ?? 0) >= finalHead,
      30_000,
    )
    const index = await sql<{ id: string; seq: string; board: string }>(
      f.primaryUrl,
      `select id, seq, board from ${AGG}.indexed_signals where seq > ${indexStarts()} order by seq`,
    )
    finalIndexHead = Number(
      (await sql<{ head: string }>(f.primaryUrl, `select coalesce(max(seq), 0) head from ${AGG}.indexed_signals`))[0]!.head,
    )
    await timeUntil(() => cursors.every((c, i) => c >= (specs[i]!.search ? finalIndexHead : finalHead)), 30_000)
    stop.abort() // the followers at the head stop waiting; one not there by now has not caught up
    const done = await Promise.all(followers)
    const heads = specs.map((spec) => (spec.search ? finalIndexHead : finalHead))
    const truths = specs.map((spec) => (spec.search ? index : board))
    const inIndex = new Set(index.filter((r) => r.board === f.authority).map((r) => r.id))
    // the publishers start after every follower did: each acknowledged publish must be in the index above the search's start
    const unindexed = records.filter((r) => r.status === 200 && !inIndex.has(r.id!)).length
    return { ...result, ...kept(records, truths, done, starts, heads), unindexed }
  } finally {
    stopped = true
    stop.abort()
  }
}

function kept(
  records: PublishRecord[],
  truths: Array<Array<{ id: string; seq: string }>>,
  done: FollowerResult[],
  starts: number[],
  heads: number[],
): Omit<Kept, 'unindexed'> {
  const onBoard = new Set(truths[0]!.map((r) => r.id))
  const acked = records.filter((r) => r.status === 200)
  const refused: Record<string, number> = {}
  for (const r of records) if (r.status !== 200) refused[r.status] = (refused[r.status] ?? 0) + 1
  let skipped = 0
  let caughtUp = 0
  for (const [i, res] of done.entries()) {
    const seen = new Set(res.seen)
    // below its cursor and never received: skipped; above it (not caught up) is counted apart
    const missing = truths[i]!.filter((r) => Number(r.seq) > starts[i]! && Number(r.seq) <= res.cursor && !seen.has(r.id)).length
    skipped += missing
    if (missing === 0 && res.cursor >= heads[i]!) caughtUp++
  }
  return {
    publishes: records.length,
    acknowledged: acked.length,
    refused,
    lost: acked.filter((r) => !onBoard.has(r.id!)).length,
    skipped,
    followers: starts.length,
    caughtUp,
    wentBack: done.reduce((n, r) => n + r.wentBack, 0),
  }
}
