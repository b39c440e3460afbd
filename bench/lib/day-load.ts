import { setTimeout as sleep } from 'node:timers/promises'
import { type Db, ddlTransaction, type Ident, type NewSignal, partitionSql, signalWriter } from '../../libs/shared/db/index.js'
import type { DayRows } from './day-rows.js'

// The simulated day's publishing (bench/day.ts): the writer's own statement (signals/write.ts
// insertBatch: seqs from feed_head, the rows and their tag rows in one statement, one commit per
// batch) on one connection, as one writer's group commit lane. Paced at `rate` real signals/s:
// each batch is what arrived while the previous one committed (at most `maxBatch`), as the
// writer's batcher makes them; rate 0: batches of `maxBatch` as fast as they commit. Keyed
// publishes look their keys up first (day-keys.ts) and the batch stores the keys with the signals
// (insertKeyedBatch). Pins go
// through the moderator's statement (setPinned). Partitions are made ahead at the scaled width
// (see `makeNext`).

export interface LoadOptions {
  rows: DayRows
  total: number
  /** Real signals per second; 0: as fast as the database takes them. */
  rate: number
  maxBatch: number
  /** Seq values per partition: six simulated hours at the day's rate. */
  width: number
  /** Before a batch is stored: what each of its publishes does first (an Idempotency-Key looked up); the keys to store with them. */
  beforeInsert?: (batch: readonly NewSignal[]) => Promise<Array<string | null>>
  /** Called after every committed batch with the new head (the sweeper's clock follows it). */
  onHead: (head: number) => void
  stop: AbortSignal
}

export interface LoadResult {
  inserted: number
  batches: number
  seconds: number
  /** Each batch's commit: when it ended (performance.now()) and how long it took, ms. */
  commits: Array<{ t: number; ms: number }>
  /** Most signals the generator was behind its schedule (paced runs). */
  behindMax: number
  pins: number
  /** Partition creations: when each began (performance.now()) and its wall ms (advisory lock, table lock, the DDL, commit). */
  creates: Array<{ t: number; ms: number }>
}

/**
 * Makes the next partition as signals/partitions.ts `ensure` does (its advisory lock, then its
 * locks first with a short wait, retried: partition-locks.ts, partitionSql), but at the scaled
 * width: ensure makes nothing narrower than 1,000,000 seq values (PARTITION_MIN_ROWS). The bench
 * keeps more than one whole partition ahead of the head (the short form fills one in a fraction of
 * a second, faster than a loaded machine may make the next), so the writer's and the sweeper's own
 * ensure (half-way into the last) find nothing to do (the sweeper reports `made`).
 */
async function makeNext(db: Db, s: Ident, lo: number, width: number): Promise<number> {
  const t0 = performance.now()
  await ddlTransaction(db, s, `wire:${s}:partitions`, async (tx, lock) => {
    await lock()
    await tx.exec(partitionSql(s, `signals_s${lo}`, String(lo), lo + width))
  })
  return performance.now() - t0
}

/** Replaces the migration's first partition (a million wide) with one of the scaled width, [1, 1 + width). */
export async function firstPartition(db: Db, s: Ident, width: number): Promise<void> {
  await db.exec(`alter table ${s}.signals detach partition ${s}.signals_s0; drop table ${s}.signals_s0;
    alter table ${s}.signal_tags detach partition ${s}.signal_tags_s0; drop table ${s}.signal_tags_s0;
    ${partitionSql(s, 'signals_s1', '1', 1 + width)}`)
}

export async function load(writerDb: Db, makerDb: Db, s: Ident, o: LoadOptions): Promise<LoadResult> {
  const writer = signalWriter(writerDb, s)
  const r: LoadResult = { inserted: 0, batches: 0, seconds: 0, commits: [], behindMax: 0, pins: 0, creates: [] }
  let lastLo = 1
  let making: Promise<void> | null = null
  const t0 = performance.now()
  while (r.inserted < o.total && !o.stop.aborted) {
    const scheduled = o.rate > 0 ? Math.min(o.total, Math.floor(((performance.now() - t0) / 1000) * o.rate)) : o.total
    const due = scheduled - r.inserted
    if (due <= 0) {
      await sleep(1)
      continue
    }
    r.behindMax = Math.max(r.behindMax, o.rate > 0 ? due : 0)
    const n = Math.min(due, o.maxBatch)
    const batch = o.rows.batch(r.inserted + 1, n)
    const keys = await o.beforeInsert?.(batch)
    const tb = performance.now()
    const stored = keys?.some((k) => k !== null) ? await writer.insertKeyedBatch(batch, keys) : await writer.insertBatch(batch)
    const te = performance.now()
    const saved = stored.filter((x) => x !== null)
    if (saved.length < stored.length) throw new Error('a fresh Idempotency-Key was already held: nothing stored for its signal')
    r.commits.push({ t: te, ms: te - tb })
    r.inserted += n
    r.batches++
    const head = saved.at(-1)!.seq
    if (head !== r.inserted) throw new Error(`the feed head is ${head}, ${r.inserted} signals published: another writer is on this schema`)
    for (const x of saved)
      if (o.rows.pinned(x.seq)) {
        await writer.setPinned(x.id, true)
        r.pins++
      }
    o.onHead(head)
    if (head >= lastLo - o.width + o.width / 4 && !making) {
      const lo = lastLo + o.width
      const t = performance.now()
      making = makeNext(makerDb, s, lo, o.width)
        .then((ms) => void (r.creates.push({ t, ms }), (lastLo = lo)))
        .finally(() => void (making = null))
    }
  }
  await making
  r.seconds = (performance.now() - t0) / 1000
  return r
}
