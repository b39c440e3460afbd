import { follow, followerKinds, publishers, type FollowerResult, type PublishRecord } from '../failover-load.js'
import { sql } from '../pg-cluster.js'
import type { NetFleet } from './fleet.js'

// The promise every drill checks, under the same load: publishers on the writer and followers of
// every kind on the two readers (bench/lib/failover-load.ts), each keeping only `nextCursor`. When
// the load stops, the board on the primary is the truth: an acknowledged publish missing from it is
// lost; a signal on it above where a follower started, which the follower never received, is
// skipped; a follower that does not reach the head in time has not caught up.

export interface Load {
  /** ms since the load started. */
  now(): number
  /** Every answer so far. */
  readonly records: readonly PublishRecord[]
  /** Resolves with the ms `check` took to hold, or null past `withinMs`; checks every 50 ms. */
  timeUntil(check: () => Promise<boolean> | boolean, withinMs: number): Promise<number | null>
  /** True once every follower's cursor is at or past `seq`. */
  followersAt(seq: number): boolean
  /** How far the followers' cursors moved so far, all together (to see them move during a fault). */
  progress(): number
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
}

const LOAD = { publishers: 4, perSecond: 10 }

export async function underLoad<T>(f: NetFleet, body: (load: Load) => Promise<T>): Promise<T & Kept> {
  const t0 = Date.now()
  const readers: [string, string] = [f.roles.reader1.url, f.roles.reader2.url]
  const specs = followerKinds(readers)
  const cursors = specs.map(() => -1)
  const starts = specs.map(() => -1)
  let finalHead = Infinity
  const stop = new AbortController()
  const followers = specs.map((spec, i) =>
    follow({ ...spec, onCursor: (c) => ((cursors[i] = c), starts[i]! < 0 && (starts[i] = c)) }, (c) => c >= finalHead, stop.signal),
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
    followersAt: (seq) => cursors.every((c) => c >= seq),
    progress: () => cursors.reduce((n, c, i) => n + Math.max(0, c - starts[i]!), 0),
  }
  try {
    // steady first: publishes acknowledged and followed before any fault
    if ((await timeUntil(() => acked().length >= 5 && view.followersAt(acked()[4]!.cursor!), 30_000)) === null)
      throw new Error('no steady load before the fault')
    const result = await body(view)
    stopped = true
    await load
    const board = await sql<{ id: string; seq: string }>(
      f.primaryUrl,
      `select id, seq from wire.signals where seq > ${Math.min(...starts)} order by seq`,
    )
    finalHead = Number((await sql<{ seq: string }>(f.primaryUrl, 'select seq from wire.feed_head'))[0]!.seq)
    await timeUntil(() => view.followersAt(finalHead), 30_000)
    stop.abort() // the followers at the head stop waiting; one not there by now has not caught up
    const done = await Promise.all(followers)
    return { ...result, ...kept(records, board, done, starts, finalHead) }
  } finally {
    stopped = true
    stop.abort()
  }
}

function kept(
  records: PublishRecord[],
  board: Array<{ id: string; seq: string }>,
  done: FollowerResult[],
  starts: number[],
  head: number,
): Kept {
  const onBoard = new Set(board.map((r) => r.id))
  const acked = records.filter((r) => r.status === 200)
  const refused: Record<string, number> = {}
  for (const r of records) if (r.status !== 200) refused[r.status] = (refused[r.status] ?? 0) + 1
  let skipped = 0
  let caughtUp = 0
  for (const [i, res] of done.entries()) {
    const seen = new Set(res.seen)
    // below its cursor and never received: skipped; above it (not caught up) is counted apart
    const missing = board.filter((r) => Number(r.seq) > starts[i]! && Number(r.seq) <= res.cursor && !seen.has(r.id)).length
    skipped += missing
    if (missing === 0 && res.cursor >= head) caughtUp++
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
