import { unfiltered, type ReadFilter, type Signal } from '../../domain/index.js'
import type { Ident, Queryable } from '../types.js'
import { withinExpiry } from './retention.js'
import { signalColumns, toSignal, type SignalRow } from './row.js'

export interface Page {
  /** Matching signals, oldest first. */
  signals: Signal[]
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
}

/**
 * Rows one request may examine. @NOTE seq is dense (every committed signal took the next number),
 * so a window of seq values is a window of rows: the page queries scan `(from, from + window]` on
 * the primary key and grow the window until the page is full, the head is reached or this budget is
 * spent. Their cost is bounded whatever the filters, and no plan depends on table statistics (a
 * board whose table was never analysed reads as fast as one that was).
 */
export const SCAN_BUDGET = 20_000
/**
 * Rows a read with `q` may examine: matching text reads (and lower-cases) every payload in the
 * window, some 20 times the work of the other filters per row, so its window is smaller.
 */
export const TEXT_SCAN_BUDGET = 4000
const budgetOf = (f: ReadFilter) => (f.q === null ? SCAN_BUDGET : TEXT_SCAN_BUDGET)
/** Unfiltered, seq is dense: twice the page almost always holds it. Filtered, start wider. */
const firstWindow = (limit: number, f: ReadFilter) =>
  unfiltered({ ...f, includeExpired: false }) // includeExpired widens, never narrows
    ? Math.max(2 * limit, 64)
    : Math.max(8 * limit, 512)

export function pageReader(db: Queryable, s: Ident, graceSeconds: number) {
  // Filters take fixed parameter slots ($3…$10) so the statement text never changes; a null or an
  // empty array means "no filter". Tags and text are matched without an index on purpose: the
  // seq window is the one access path (see SCAN_BUDGET).
  const filterSql = `
    and ($3::text is null or x.type = $3)
    and ($4::text is null or x.origin = $4)
    and (cardinality($5::text[]) = 0 or coalesce(x.tags && $5::text[], false))
    and ($6::text is null or strpos(lower(x.type || chr(1) || array_to_string(x.tags, ' ') || chr(1) || x.origin
         || chr(1) || coalesce(x.origin_name, '') || chr(1) || x.payload), $6) > 0)
    and ($7::int8 is null or x.created_at > timestamptz 'epoch' + $7::int8 * interval '1 millisecond')
    and ($8::bool or x.pinned or x.expires_at > timestamptz 'epoch' + $9::int8 * interval '1 millisecond')
    and ${withinExpiry('x.', `${graceSeconds}::int`, `(timestamptz 'epoch' + $9::int8 * interval '1 millisecond')`)}
    and ($10::text is null or x.ref_id = $10)`
  const head = `(select seq as head, changes, failover_seq as epoch from ${s}.feed_head limit 1) h`
  // forward: (from, min(head, from + window)]
  const afterSql = `
    select h.head, h.changes, h.epoch, least(h.head, $1::int8 + $11::int8) as edge, p.* from ${head} left join lateral (
      select ${signalColumns('x')} from ${s}.signals x
      where x.seq > $1 and x.seq <= least(h.head, $1::int8 + $11::int8) and x.removed_at is null ${filterSql}
      order by x.seq limit $2
    ) p on true`
  // backward from `below` (null: the head): (max(below - window, 0), below]
  const newestSql = `
    select h.head, h.changes, h.epoch, greatest(coalesce($1::int8, h.head) - $11::int8, 0) as edge, p.* from ${head} left join lateral (
      select ${signalColumns('x')} from ${s}.signals x
      where x.seq <= coalesce($1::int8, h.head) and x.seq > greatest(coalesce($1::int8, h.head) - $11::int8, 0)
        and x.removed_at is null ${filterSql}
      order by x.seq desc limit $2
    ) p on true`

  // the first stored seq above a point: a follower whose cursor sits in a dropped partition's range
  // (signals/partitions.ts) or in the stretch a failover jumped over (feed-head.ts) crosses the gap
  // in one query rather than one empty window at a time; the last one at or below a point, the same
  // going back
  const nextSql = `select min(seq) as next from ${s}.signals where seq > $1`
  const prevSql = `select max(seq) as prev from ${s}.signals where seq <= $1`

  type Row = SignalRow & { head: string; changes: string; epoch: string; edge: string }
  const run = async (sql: string, from: number | null, limit: number, window: number, f: ReadFilter, nowMs: number) => {
    const { rows } = await db.query<Row>(sql, [from, limit, f.type, f.origin, f.tags, f.q, f.sinceMs, f.includeExpired, nowMs, f.refId, window])
    return {
      head: Number(rows[0]?.head ?? 0),
      changes: Number(rows[0]?.changes ?? 0),
      epoch: Number(rows[0]?.epoch ?? 0),
      edge: Number(rows[0]?.edge ?? 0),
      signals: rows.filter((r) => r.id !== null).map(toSignal),
    }
  }

  return {
    /** Matching signals with seq > cursor, oldest first, up to `limit`, within the scan budget. */
    async pageAfter(cursor: number, limit: number, f: ReadFilter, nowMs: number): Promise<Page> {
      const out: Signal[] = []
      let from = cursor
      const budget = budgetOf(f)
      let window = Math.min(firstWindow(limit, f), budget)
      let scanned = 0
      let jumped = false
      for (;;) {
        const r = await run(afterSql, from, limit - out.length, window, f, nowMs)
        out.push(...r.signals)
        scanned += r.edge - from
        const full = out.length === limit
        if (full || r.edge >= r.head || scanned >= budget)
          return { signals: out, head: r.head, changes: r.changes, epoch: r.epoch, upTo: full ? out.at(-1)!.seq : Math.max(cursor, r.edge) }
        from = r.edge
        if (out.length === 0 && !jumped) {
          // no row exists between here and the next stored one (seq <= head is all committed, and a
          // row carried out of a dropped partition moves in the transaction that detaches it)
          jumped = true
          const next = (await db.query<{ next: string | null }>(nextSql, [from])).rows[0]?.next
          from = Math.max(from, Math.min(r.head, next == null ? r.head : Number(next) - 1))
          if (from >= r.head) return { signals: out, head: r.head, changes: r.changes, epoch: r.epoch, upTo: from }
        }
        window = Math.min(window * 4, budget - scanned)
      }
    },
    /**
     * The newest `limit` matching signals among the last SCAN_BUDGET (TEXT_SCAN_BUDGET with `q`)
     * stored seqs, oldest first (the bootstrap page). `from`: every matching signal above it is in
     * the page (0: the page reaches the board's first signal).
     */
    async newest(limit: number, f: ReadFilter, nowMs: number): Promise<Page & { from: number }> {
      const out: Signal[] = []
      const budget = budgetOf(f)
      let below: number | null = null
      let window = Math.min(firstWindow(limit, f), budget)
      let first: { head: number; changes: number; epoch: number } | null = null
      let from = 0
      for (let scanned = 0; ; ) {
        const r = await run(newestSql, below, limit - out.length, window, f, nowMs)
        first ??= { head: r.head, changes: r.changes, epoch: r.epoch }
        out.push(...r.signals)
        scanned += (below ?? r.head) - r.edge
        if (out.length === limit) {
          from = out.length ? out.at(-1)!.seq - 1 : r.head // the oldest signal taken (a limit of 0 takes none)
          break
        }
        if (r.edge === 0) break
        // step down to the next stored row: nothing lies between (a failover's jump, a dropped partition)
        const prev = (await db.query<{ prev: string | null }>(prevSql, [r.edge])).rows[0]?.prev
        if (prev == null) break
        below = Number(prev)
        if (scanned >= budget) {
          from = below
          break
        }
        window = Math.min(window * 4, budget - scanned)
      }
      return { signals: out.reverse(), head: first.head, changes: first.changes, epoch: first.epoch, upTo: first.head, from }
    },
  }
}
