import type { ReadFilter, Signal } from '../../domain/index.js'
import type { Ident, Queryable } from '../types.js'
import { checksOf, driveIsWholeFilter, driveOf, P, pageParams, pageSql, signalJsonSql } from './page-sql.js'
import { signalColumns, toSignal, type SignalRow } from './row.js'

export interface Page<T = Signal> {
  /** Matching signals, oldest first (as Signal, or as their emitted JSON). */
  signals: T[]
  /** The feed head in the snapshot of the first query: every seq ≤ head was visible to this read. */
  head: number
  /** How many pins, unpins and removals the board has seen (feed_head.changes), same snapshot. */
  changes: number
  /**
   * Where `seq` last jumped forward after a failover (feed_head.failover_seq; 0 if never), same
   * snapshot. When it changes, signals a reader took from the lost primary may be gone.
   */
  epoch: number
  /**
   * Forward pages: every matching signal with seq ≤ upTo is in `signals` (so a follower may move its
   * cursor here). Below `head` when the page is full or the scan budget ran out before the head.
   */
  upTo: number
  /**
   * The scan budget stopped the page short of `limit` before the end of its range: more may match
   * after `upTo` (forward) or below the page's oldest signal (the newest page).
   */
  partial: boolean
}

/**
 * Index entries (and their rows) one request may examine. @NOTE a page walks one ordered index
 * range (page-sql.ts `Drive`) from the cursor, so a page whose filters are all in that range costs
 * one page of index work; the budget bounds what the other filters, expiry and removals may make
 * it skip. Its cost is bounded whatever the filters, and no plan depends on table statistics.
 */
export const SCAN_BUDGET = 20_000
/**
 * Rows a read with `q` may examine: matching text reads (and lower-cases) every payload it
 * examines, some 20 times the work of the other filters per row, so its budget is smaller.
 */
export const TEXT_SCAN_BUDGET = 4000
const budgetOf = (f: ReadFilter) => (f.q === null ? SCAN_BUDGET : TEXT_SCAN_BUDGET)
/**
 * Candidates the first query examines: when the drive is the whole filter, every live one matches
 * and the page itself is enough; otherwise start wider. Each further query takes four times more.
 */
const firstBatch = (limit: number, f: ReadFilter) => (driveIsWholeFilter(f) ? limit : Math.max(4 * limit, 256))

/** Statement texts one reader keeps and prepares (drive × direction × select list × checks × sizes in use). */
const MAX_PREPARED = 128
/**
 * Page sizes and candidate counts are written into the statement text as constants from this
 * ladder (a page is rounded up, then cut): with constant limits PostgreSQL's generic plan costs
 * what its custom plans do (the tables have no statistics either way), so a prepared statement
 * settles on it after five runs and is never planned again. Planning this statement costs more
 * than running it. A count off the ladder (the last, budget-capped step) is sent unprepared.
 */
const LADDER = [8, 32, 100, 256, 1024, 4096, 16_384]
const ladderUp = (n: number) => LADDER.find((x) => x >= n) ?? n

type Row = { head: string; changes: string; epoch: string; n: string; edge: string | null; page_seq: string | null }

export function pageReader(db: Queryable, s: Ident, graceSeconds: number) {
  // @NOTE a statement text per drive, direction, select list and set of checks: kept (and prepared
  // on PostgreSQL) for the first MAX_PREPARED texts, made afresh and sent unprepared past them, so
  // no mix of filters a client sends can grow what this process or PostgreSQL keeps
  const texts = new Map<string, string>()
  const sqlOf = (f: ReadFilter, dir: 'after' | 'before', from: number | null, json: boolean, limit: number, batch: number) => {
    const checks = checksOf(f)
    const shape = { drive: driveOf(f), dir, fromHead: from === null, oneTag: f.tags.length === 1 }
    const key = `${Object.values(shape).join(':')}:${json}:${Object.values(checks).map(Number).join('')}:${limit}:${batch}`
    const known = texts.get(key)
    if (known !== undefined) return { sql: known, prepared: true }
    const sql = pageSql(s, shape, json ? signalJsonSql('x', P.authority) : signalColumns('x'), checks, limit, batch)
    const keep = texts.size < MAX_PREPARED && LADDER.includes(batch)
    if (keep) texts.set(key, sql)
    return { sql, prepared: keep }
  }

  interface Batch<T> {
    head: number
    changes: number
    epoch: number
    /** Candidates examined, and the last of them in the walking direction. */
    n: number
    edge: number | null
    /** Candidates the statement was allowed (n < batch: the range ended). */
    batch: number
    rows: Array<{ seq: number; value: T }>
  }
  /** One statement: up to `want` matches among `batch` candidates (rounded up to the ladder, never past `cap`). */
  const run = async <T>(
    dir: 'after' | 'before',
    from: number | null,
    want: number,
    batch: number,
    cap: number,
    f: ReadFilter,
    nowMs: number,
    json: string | null,
    map: (r: never) => T,
  ): Promise<Batch<T>> => {
    const limit = ladderUp(want)
    const examine = Math.min(ladderUp(batch), cap)
    const cutoff = new Date(f.includeExpired ? nowMs - graceSeconds * 1000 : nowMs) // swept past the grace; hidden past expiry unless asked
    const params = pageParams({ from, limit, batch: examine, cutoff, filter: f, authority: json }) // by name (page-sql.ts PAGE_PARAMS)
    const { sql, prepared } = sqlOf(f, dir, from, json !== null, limit, examine)
    const { rows } = await db.query<Row>(sql, params, { prepared })
    const r = rows[0]!
    return {
      head: Number(r.head),
      changes: Number(r.changes),
      epoch: Number(r.epoch),
      n: Number(r.n),
      edge: r.edge === null ? null : Number(r.edge),
      batch: examine,
      // a page rounded up to the ladder may bring more than wanted: the first `want` are the page
      rows: rows
        .filter((x) => x.page_seq !== null)
        .slice(0, want)
        .map((x) => ({ seq: Number(x.page_seq), value: map(x as never) })),
    }
  }

  /** Matching signals with seq > cursor, oldest first, up to `limit`, within the scan budget. */
  async function after<T>(
    cursor: number,
    limit: number,
    f: ReadFilter,
    nowMs: number,
    json: string | null,
    map: (r: never) => T,
  ): Promise<Page<T>> {
    const out: T[] = []
    const budget = budgetOf(f)
    let from = cursor
    let batch = Math.min(firstBatch(limit, f), budget)
    for (let examined = 0; ; ) {
      const r: Batch<T> = await run('after', from, limit - out.length, batch, budget - examined, f, nowMs, json, map)
      for (const x of r.rows) out.push(x.value)
      examined += r.n
      const page = { signals: out, head: r.head, changes: r.changes, epoch: r.epoch, partial: false }
      if (out.length === limit) return { ...page, upTo: r.rows.at(-1)!.seq }
      if (r.n < r.batch || r.edge! >= r.head) return { ...page, upTo: Math.max(cursor, r.head) } // the range ended at the head
      from = r.edge!
      if (examined >= budget) return { ...page, upTo: from, partial: true }
      batch = Math.min(batch * 4, budget - examined)
    }
  }

  /**
   * The newest `limit` matching signals, oldest first, within the scan budget (the bootstrap page).
   * `from`: every matching signal above it is in the page (0: the page reaches the board's first signal).
   */
  async function newest<T>(
    limit: number,
    f: ReadFilter,
    nowMs: number,
    json: string | null,
    map: (r: never) => T,
  ): Promise<Page<T> & { from: number }> {
    const out: Array<{ seq: number; value: T }> = []
    const budget = budgetOf(f)
    let below: number | null = null
    let batch = Math.min(firstBatch(limit, f), budget)
    let first: { head: number; changes: number; epoch: number } | null = null
    let partial = false
    let from = 0
    for (let examined = 0; ; ) {
      const r: Batch<T> = await run('before', below, limit - out.length, batch, budget - examined, f, nowMs, json, map)
      first ??= { head: r.head, changes: r.changes, epoch: r.epoch }
      out.push(...r.rows)
      examined += r.n
      if (out.length === limit) {
        from = out.length ? out.at(-1)!.seq - 1 : r.head // the oldest signal taken (a limit of 0 takes none)
        break
      }
      if (r.n < r.batch) break // the range reached the board's first signal
      below = r.edge! - 1
      if (examined >= budget) {
        partial = true
        from = below
        break
      }
      batch = Math.min(batch * 4, budget - examined)
    }
    return {
      signals: out.reverse().map((x) => x.value),
      head: first.head,
      changes: first.changes,
      epoch: first.epoch,
      upTo: first.head,
      partial,
      from,
    }
  }

  const asSignal = (r: never) => toSignal(r as SignalRow)
  const asJson = (r: never) => (r as { json: string }).json
  return {
    pageAfter: (cursor: number, limit: number, f: ReadFilter, nowMs: number) => after(cursor, limit, f, nowMs, null, asSignal),
    newest: (limit: number, f: ReadFilter, nowMs: number) => newest(limit, f, nowMs, null, asSignal),
    /** pageAfter with each signal as its emitted JSON, built by PostgreSQL (page-sql.ts signalJsonSql). */
    pageAfterJson: (cursor: number, limit: number, f: ReadFilter, nowMs: number, authority: string) =>
      after(cursor, limit, f, nowMs, authority, asJson),
    /** newest with each signal as its emitted JSON. */
    newestJson: (limit: number, f: ReadFilter, nowMs: number, authority: string) => newest(limit, f, nowMs, authority, asJson),
  }
}
