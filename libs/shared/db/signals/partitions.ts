import { setTimeout as sleep } from 'node:timers/promises'
import type { Db, Ident, Queryable } from '../types.js'
import { KEPT_PARTITION, PURGE_FLOOR_SECONDS } from './purge-guards.js'

/** A range partition of `signals`: seq in [lo, hi). `lo` is null for the first one (MINVALUE). */
export interface Partition {
  name: string
  lo: number | null
  hi: number
}

/** A new partition aims to hold this long of publishing at the recent rate (a time slice in seq). */
export const PARTITION_SLICE_SECONDS = 6 * 3600
/** Bounds on a new partition's width, in seq values. */
export const PARTITION_MIN_ROWS = 1_000_000
export const PARTITION_MAX_ROWS = 500_000_000
/** A partition is dropped once at most this many of its rows must be kept (carried forward). */
export const CARRY_MAX_ROWS = 10_000
/** Pause between the pieces of a detached partition's removal. */
const DROP_PAUSE_MS = 20
/** How far back the recent rate is measured, in seq values. */
const RATE_SAMPLE = 100_000

const NAME_RE = /^signals_(s|gone_)\d+$/

/**
 * A new partition: seq in [lo, hi), with its own unique index on `id` (a partitioned table cannot
 * have one without the partition key; migrations/0007). `lo` may be 'minvalue'.
 */
export function partitionSql(s: Ident, name: string, lo: string, hi: number): string {
  if (!NAME_RE.test(name)) throw new Error(`unexpected partition name: ${name}`)
  return `create table ${s}."${name}" partition of ${s}.signals for values from (${lo}) to (${hi});
    create unique index "${name}_id_key" on ${s}."${name}" (id)`
}

const BOUND_RE = /^FOR VALUES FROM \((MINVALUE|'?(-?\d+)'?)\) TO \('?(-?\d+)'?\)$/

export interface RetireReport {
  dropped: number
  /** Disk the dropped partitions held, indexes included. */
  bytes: number
  /** Rows copied into the default partition because they must stay. */
  carried: number
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
    /** The partitions the row purge works on: the open ones (the head is not past them) and the default one. */
    async rowPurged(): Promise<string[]> {
      const head = Number((await db.query<{ seq: string }>(`select seq from ${s}.feed_head`)).rows[0]?.seq ?? 0)
      return [...(await list()).filter((p) => p.hi - 1 > head).map((p) => p.name), KEPT_PARTITION]
    },
    /**
     * Makes sure partitions reach well past the head (the last one ends at least half its width
     * above it). Cheap when nothing is needed (one catalog read, no lock). Returns the partitions
     * it made and the head at which to look again.
     */
    async ensure(head?: number): Promise<{ made: string[]; recheckAt: number }> {
      const h = head ?? Number((await db.query<{ seq: string }>(`select seq from ${s}.feed_head`)).rows[0]?.seq ?? 0)
      const recheckAt = (parts: Partition[]) => {
        const last = parts.at(-1)
        return last === undefined ? 0 : Math.ceil(last.hi - (last.hi - (last.lo ?? 0)) / 2)
      }
      const known = await list()
      if (h < recheckAt(known)) return { made: [], recheckAt: recheckAt(known) }
      return db.transaction(async (tx) => {
        await tx.query(`select pg_advisory_xact_lock(hashtextextended($1, 0))`, [lockKey])
        await tx.exec(`set local lock_timeout = '5s'`)
        const made: string[] = []
        let parts = await list(tx)
        while (h >= recheckAt(parts)) {
          // rows that fell into the default partition above the last range stay there: start above them
          const { rows } = await tx.query<{ top: string | null }>(`select max(seq) as top from ${s}.${KEPT_PARTITION}`)
          const lo = Math.max(parts.at(-1)?.hi ?? 1, Number(rows[0]?.top ?? 0) + 1)
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
     * purge defines it (signals/purge.ts), but for at most CARRY_MAX_ROWS: those (pinned signals,
     * the odd long-lived one) are copied into the default partition, keeping their seq, in the
     * transaction that detaches the partition, so no reader ever misses one. The detached table is
     * dropped in a second, short transaction; a drop cut short is finished by the next run.
     */
    async retire(graceSeconds: number): Promise<RetireReport> {
      const report: RetireReport = { dropped: 0, bytes: 0, carried: 0, detachMs: 0, dropMs: 0 }
      const { rows: st } = await db.query<{ head: string; rolled: string }>(
        `select (select seq from ${s}.feed_head) as head, (select last_seq from ${s}.stats_rollup) as rolled`,
      )
      const head = Number(st[0]!.head)
      const rolled = Number(st[0]!.rolled)
      // the rows a drop must keep: exactly those the row purge would not delete (signals/purge.ts),
      // as a union of three index scans (created_at, the pinned and the unpinned expires_at indexes)
      const cutoff = `now() - $1::int * interval '1 second'`
      const live = `(removed_at is null or removed_at >= ${cutoff})`
      const keep = (t: string) => `select seq from ${t} where created_at >= now() - ${PURGE_FLOOR_SECONDS} * interval '1 second'
        union select seq from ${t} where pinned and ${live}
        union select seq from ${t} where not pinned and expires_at >= ${cutoff} and ${live}`
      for (const p of await list()) {
        if (p.hi - 1 > head || p.hi - 1 > rolled) break // open, or not all counted by the stats rollup
        const dropped = await db.transaction(async (tx) => {
          await tx.query(`select pg_advisory_xact_lock(hashtextextended($1, 0))`, [lockKey])
          if (!(await list(tx)).some((x) => x.name === p.name)) return false // another sweeper took it
          // index scans only: a drop never reads the partition's rows, only the few it keeps
          await tx.exec(`set local enable_seqscan = off; set local lock_timeout = '1s'`)
          const survivors = await tx.query<{ n: number }>(
            `select count(*)::int as n from (${keep(q(p.name))} limit ${CARRY_MAX_ROWS + 1}) k`,
            [graceSeconds],
          )
          if (survivors.rows[0]!.n > CARRY_MAX_ROWS) return false
          const size = await tx.query<{ n: string }>(`select pg_total_relation_size(to_regclass('${q(p.name)}')) as n`)
          const gone = `signals_gone_${p.lo ?? 0}`
          const t0 = performance.now()
          await tx.exec(`alter table ${s}.signals detach partition ${q(p.name)}; alter table ${q(p.name)} rename to "${gone}"`)
          const carried = await tx.query(`insert into ${s}.signals select * from ${q(gone)} where seq in (${keep(q(gone))})`, [graceSeconds])
          report.carried += carried.rowCount
          report.bytes += Number(size.rows[0]?.n ?? 0)
          return t0
        })
        if (dropped === false) break // partitions retire oldest first: a younger one is not purgeable either
        report.detachMs += performance.now() - dropped // until the commit
        report.dropped++
      }
      const t1 = performance.now()
      await dropDetached()
      report.dropMs = performance.now() - t1
      return report
    },
  }

  async function dropDetached(): Promise<void> {
    const { rows } = await db.query<{ name: string }>(
      `select relname as name from pg_class where relnamespace = to_regnamespace('${s}') and relkind = 'r' and relname like 'signals\\_gone\\_%'`,
    )
    // @NOTE a table of gigabytes goes a piece at a time (each index, then the table), with a pause
    // between: removing all its files in one commit stalls the disk under concurrent publishes
    for (const r of rows) {
      const idx = await db.query<{ name: string; con: string | null }>(
        `select i.relname as name, c.conname as con from pg_index x join pg_class i on i.oid = x.indexrelid
         left join pg_constraint c on c.conindid = x.indexrelid where x.indrelid = to_regclass('${q(r.name)}')`,
      )
      for (const i of idx.rows) {
        const what = i.con ? `alter table ${q(r.name)} drop constraint "${i.con}"` : `drop index if exists ${s}."${i.name}"`
        await db.transaction((tx) => tx.exec(`set local lock_timeout = '1s'; ${what}`))
        await sleep(DROP_PAUSE_MS)
      }
      await db.transaction((tx) => tx.exec(`set local lock_timeout = '1s'; drop table if exists ${q(r.name)}`))
    }
  }
}
export type SignalPartitions = ReturnType<typeof signalPartitions>
