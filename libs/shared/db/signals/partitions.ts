import type { Db, Ident, Queryable, Tx } from '../types.js'
import { dropDetached, keptRowsSql, survivorsSql } from './partition-drop.js'
import { ddlTransaction, lockForDdl } from './partition-locks.js'
import { KEPT_PARTITION } from './retention.js'

/** A range partition of `signals`: seq in [lo, hi). `lo` is null for the first one (MINVALUE). */
export interface Partition {
  name: string
  lo: number | null
  hi: number
}

/** A new partition aims to hold this long of publishing at the recent rate (a time slice in seq). */
const PARTITION_SLICE_SECONDS = 6 * 3600
/** Bounds on a new partition's width, in seq values. */
const PARTITION_MIN_ROWS = 1_000_000
const PARTITION_MAX_ROWS = 500_000_000
/** A head more than this far above the last partition gets its next partition at the head (at most 64 are made below it). */
const MAX_GAP = 64 * PARTITION_MIN_ROWS
/** A partition is dropped once at most this many of its rows must be kept (carried forward). */
export const CARRY_MAX_ROWS = 10_000
/** How far back the recent rate is measured, in seq values. */
const RATE_SAMPLE = 100_000

const NAME_RE = /^signal(s|_tags)_(s|gone_)\d+$/

/** The `signal_tags` partition that goes with a `signals` partition (migrations/0008): same bounds. */
const tagsPartition = (name: string) => name.replace(/^signals_/, 'signal_tags_')

/**
 * A new partition: seq in [lo, hi), with its own unique index on `id` (a partitioned table cannot
 * have one without the partition key; migrations/0007), and its twin of `signal_tags`. `lo` may be
 * 'minvalue'.
 */
export function partitionSql(s: Ident, name: string, lo: string, hi: number): string {
  if (!NAME_RE.test(name)) throw new Error(`unexpected partition name: ${name}`)
  return `create table ${s}."${name}" partition of ${s}.signals for values from (${lo}) to (${hi});
    create unique index "${name}_id_key" on ${s}."${name}" (id);
    create table ${s}."${tagsPartition(name)}" partition of ${s}.signal_tags for values from (${lo}) to (${hi})`
}

const BOUND_RE = /^FOR VALUES FROM \((MINVALUE|'?(-?\d+)'?)\) TO \('?(-?\d+)'?\)$/

export interface RetireReport {
  dropped: number
  /** Disk the dropped partitions held, indexes included. */
  bytes: number
  /** Rows copied into the default partition because they must stay. */
  carried: number
  /**
   * Closed, counted partitions left in place because more than the carry limit of their *pinned*
   * rows must stay: they would never drop, so the row purge works on them (`rowPurged`).
   */
  held: string[]
  /**
   * Closed, counted partitions left in place because more than the carry limit of their rows must
   * stay, but for the pinned ones only until they expire: each drops whole once they have. The
   * row purge leaves their expired rows alone (deleting rows from a table nothing inserts into
   * again gives no disk back: it would cost WAL, vacuum and replay for nothing) and purges only
   * their moderator-removed ones.
   */
  waiting: string[]
  /** Time `signals` was locked detaching partitions (what publishes and reads may wait for). */
  detachMs: number
  /** Time removing the detached tables' files (locks only those tables). */
  dropMs: number
}

/**
 * The partitions of `signals` (migrations/0007): creating them ahead of the head, and retiring whole
 * ones for the purge. Both take a transaction-scoped advisory lock, so any number of writers and
 * sweepers may call them at once; DDL runs with a short lock_timeout so a long query on `signals`
 * delays a drop to the next run rather than queueing publishes behind it.
 */
export function signalPartitions(db: Db, s: Ident) {
  const lockKey = `wire:${s}:partitions`
  const q = (name: string) => {
    if (!NAME_RE.test(name)) throw new Error(`unexpected partition name: ${name}`)
    return `${s}."${name}"`
  }
  const listSql = `select c.relname as name, pg_get_expr(c.relpartbound, c.oid) as bound
    from pg_inherits i join pg_class c on c.oid = i.inhrelid where i.inhparent = to_regclass('${s}.signals')`

  async function list(x: Queryable = db): Promise<Partition[]> {
    const { rows } = await x.query<{ name: string; bound: string }>(listSql)
    const out: Partition[] = []
    for (const r of rows) {
      const m = BOUND_RE.exec(r.bound)
      if (m) out.push({ name: r.name, lo: m[1] === 'MINVALUE' ? null : Number(m[2]), hi: Number(m[3]) })
    }
    return out.sort((a, b) => a.hi - b.hi)
  }

  /** Width for the next partition: PARTITION_SLICE_SECONDS at the rate of the last RATE_SAMPLE signals. */
  async function nextWidth(x: Queryable, head: number): Promise<number> {
    if (head <= 1) return PARTITION_MIN_ROWS
    const back = Math.max(1, head - RATE_SAMPLE)
    const { rows } = await x.query<{ dt: number | null }>(
      `select extract(epoch from (select created_at from ${s}.signals where seq = $1) - (select created_at from ${s}.signals where seq = $2))::float8 as dt`,
      [head, back],
    )
    const dt = rows[0]?.dt
    if (dt == null || dt <= 0) return PARTITION_MIN_ROWS
    const w = Math.round(((head - back) / dt) * PARTITION_SLICE_SECONDS)
    return Math.min(PARTITION_MAX_ROWS, Math.max(PARTITION_MIN_ROWS, w))
  }

  return {
    list: () => list(),
    /** `signals_<…>` schema-qualified, for a partition name from this module (or the default partition). */
    relation: (name: string) => (name === KEPT_PARTITION ? `${s}.${KEPT_PARTITION}` : q(name)),
    /**
     * The partitions the row purge works on, by kind: expired rows in the open ones (the head is
     * not past them), the closed ones `retire` held (`RetireReport.held`) and the default one;
     * removed rows there and in the closed ones waiting for their drop (`RetireReport.waiting`).
     */
    async rowPurged(
      retired: Pick<RetireReport, 'held' | 'waiting'> = { held: [], waiting: [] },
    ): Promise<{ expired: string[]; removed: string[] }> {
      const head = Number((await db.query<{ seq: string }>(`select seq from ${s}.feed_head`)).rows[0]?.seq ?? 0)
      const open = (await list()).filter((p) => p.hi - 1 > head).map((p) => p.name)
      const expired = [...open, ...retired.held.filter((n) => !open.includes(n)), KEPT_PARTITION]
      return { expired, removed: [...expired, ...retired.waiting.filter((n) => !expired.includes(n))] }
    },
    /**
     * Makes sure partitions reach well past the head (the last one ends at least half its width
     * above it). Cheap when nothing is needed (one catalog read, no lock). Returns the partitions
     * it made and the head at which to look again.
     */
    async ensure(head?: number, inTx?: Tx): Promise<{ made: string[]; recheckAt: number }> {
      const x: Queryable = inTx ?? db
      const h = head ?? Number((await x.query<{ seq: string }>(`select seq from ${s}.feed_head`)).rows[0]?.seq ?? 0)
      const recheckAt = (parts: Partition[]) => {
        const last = parts.at(-1)
        return last === undefined ? 0 : Math.ceil(last.hi - (last.hi - (last.lo ?? 0)) / 2)
      }
      const known = await list(x)
      if (h < recheckAt(known)) return { made: [], recheckAt: recheckAt(known) }
      // in the caller's transaction (a restore: its DDL goes with its rows, and it waits as long as
      // a restore may), or one of its own (partition-locks.ts). Its locks come first: no insert may
      // land in the default partition between reading its top and making the next partition above
      // it (after a failover's jump the head runs there until one is made).
      const within = <T>(fn: (tx: Tx) => Promise<T>) =>
        inTx
          ? inTx
              .query(`select pg_advisory_xact_lock(hashtextextended($1, 0))`, [lockKey])
              .then(() => lockForDdl(inTx, s, [], 5000))
              .then(() => fn(inTx))
          : ddlTransaction(db, s, lockKey, async (tx, lock) => (await lock(), fn(tx)))
      return within(async (tx) => {
        const made: string[] = []
        let parts = await list(tx)
        while (h >= recheckAt(parts)) {
          // rows that fell into the default partition above the last range stay there: start above them
          const { rows } = await tx.query<{ top: string | null }>(`select max(seq) as top from ${s}.${KEPT_PARTITION}`)
          // a head far above the last range (a restore's) gets a range at the head, not every one below it
          const from = parts.at(-1)?.hi ?? 1
          const lo = Math.max(h - from > MAX_GAP ? h : from, Number(rows[0]?.top ?? 0) + 1)
          const name = `signals_s${lo}`
          const hi = lo + (await nextWidth(tx, h))
          await tx.exec(partitionSql(s, name, String(lo), hi))
          made.push(name)
          parts = await list(tx)
        }
        return { made, recheckAt: recheckAt(parts) }
      })
    },
    /**
     * Drops every closed partition (the head is past it) whose rows are all purgeable, as the row
     * purge defines it (signals/purge.ts), but for at most `carryMax`: those (pinned signals,
     * the odd long-lived one) are copied into the default partition, keeping their seq, in the
     * transaction that detaches the partition, so no reader ever misses one. The detached table is
     * dropped in a second, short transaction; a drop cut short is finished by the next run.
     * A partition with more rows to keep waits for them to expire, or is held when its pinned
     * rows alone are too many (both reported, for the row purge), and the younger ones are still
     * looked at: a partition of pinned signals must not keep every later one.
     */
    async retire(graceSeconds: number, carryMax: number = CARRY_MAX_ROWS): Promise<RetireReport> {
      const report: RetireReport = { dropped: 0, bytes: 0, carried: 0, held: [], waiting: [], detachMs: 0, dropMs: 0 }
      const { rows: st } = await db.query<{ head: string; rolled: string }>(
        `select (select seq from ${s}.feed_head) as head, (select last_seq from ${s}.stats_rollup) as rolled`,
      )
      const head = Number(st[0]!.head)
      const rolled = Number(st[0]!.rolled)
      for (const p of await list()) {
        if (p.hi - 1 > head || p.hi - 1 > rolled) break // open, or not all counted by the stats rollup
        const dropped = await ddlTransaction(db, s, lockKey, async (tx, lock) => {
          if (!(await list(tx)).some((x) => x.name === p.name)) return 'gone' // another sweeper took it
          // index scans only: a drop never reads the partition's rows, only the few it keeps
          await tx.exec(`set local enable_seqscan = off; set local lock_timeout = '1s'`)
          const survivors = (await tx.query<{ kept: number; pinned: number }>(survivorsSql(q(p.name), carryMax), [graceSeconds])).rows[0]!
          if (survivors.kept > carryMax) return survivors.pinned > carryMax ? 'held' : 'waiting'
          const size = await tx.query<{ n: string }>(`select pg_total_relation_size(to_regclass('${q(p.name)}')) as n`)
          const gone = `signals_gone_${p.lo ?? 0}`
          const t0 = performance.now()
          const tags = tagsPartition(p.name)
          await lock([q(p.name), q(tags)])
          await tx.exec(`alter table ${s}.signals detach partition ${q(p.name)}; alter table ${q(p.name)} rename to "${gone}";
            alter table ${s}.signal_tags detach partition ${q(tags)}; alter table ${q(tags)} rename to "${tagsPartition(gone)}"`)
          // the carried rows take their tag rows along (into signal_tags' default partition)
          const carried = await tx.query<{ n: number }>(
            `with c as (insert into ${s}.signals select * from ${q(gone)} where seq in (${keptRowsSql(q(gone))}) returning seq, tags),
              t as (insert into ${s}.signal_tags (tag, seq) select distinct u.tag, c.seq from c cross join unnest(c.tags) u(tag))
             select count(*)::int as n from c`,
            [graceSeconds],
          )
          report.carried += carried.rows[0]!.n
          report.bytes += Number(size.rows[0]?.n ?? 0)
          return t0
        })
        if (dropped === 'held' || dropped === 'waiting') report[dropped].push(p.name)
        if (typeof dropped === 'string') continue
        report.detachMs += performance.now() - dropped // until the commit
        report.dropped++
      }
      const t1 = performance.now()
      await dropDetached(db, s, q)
      report.dropMs = performance.now() - t1
      return report
    },
  }
}
