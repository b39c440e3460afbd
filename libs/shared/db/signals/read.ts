import type { ReadFilter, Signal } from '../../domain/index.js'
import type { Ident, Queryable } from '../types.js'
import { SIGNAL_COLUMNS, toSignal, type SignalRow } from './row.js'

export interface Page {
  signals: Signal[]
  /** The feed head in the same snapshot as the rows: every seq ≤ head was visible to this read. */
  head: number
  /** How many pins, unpins and removals the board has seen (feed_head.changes), same snapshot. */
  changes: number
}

/** A signal changed after it was published: its current state, or `null` once removed. */
export interface Change {
  id: string
  /** Its change number (feed_head.changes when it happened). */
  changed: number
  signal: Signal | null
}

export interface SignalReaderOptions {
  /** SIGNAL_SWEEP_GRACE_SECONDS: by-id reads treat a signal this long past its expiry as swept. */
  graceSeconds: number
}

/** The read side of the signals table; runs on a replica as well as the primary. */
export function signalReader(db: Queryable, s: Ident, opts: SignalReaderOptions) {
  const grace = opts.graceSeconds
  // Filters take fixed parameter slots ($3…$10) so the statement text never changes; a null or an
  // empty array means "no filter", which the planner folds away with the actual values.
  const filterSql = `
    and ($3::text is null or x.type = $3)
    and ($4::text is null or x.origin = $4)
    and (cardinality($5::text[]) = 0 or x.tags && $5::text[])
    and ($6::text is null or strpos(lower(x.type || chr(1) || array_to_string(x.tags, ' ') || chr(1) || x.origin
         || chr(1) || coalesce(x.origin_name, '') || chr(1) || x.payload), $6) > 0)
    and ($7::int8 is null or x.created_at > timestamptz 'epoch' + $7::int8 * interval '1 millisecond')
    and ($8::bool or x.pinned or x.expires_at > timestamptz 'epoch' + $9::int8 * interval '1 millisecond')
    and (x.pinned or x.expires_at > timestamptz 'epoch' + $9::int8 * interval '1 millisecond' - ${grace}::int * interval '1 second')
    and ($10::text is null or x.ref_id = $10)`
  const pageSql = (order: 'asc' | 'desc') => `
    select h.head, h.changes, p.* from (select seq as head, changes from ${s}.feed_head limit 1) h left join lateral (
      select ${SIGNAL_COLUMNS.split(', ').map((c) => `x.${c}`).join(', ')} from ${s}.signals x
      where x.seq > $1 and x.seq <= h.head and x.removed_at is null ${filterSql}
      order by x.seq ${order} limit $2
    ) p on true`
  const afterSql = pageSql('asc')
  const newestSql = pageSql('desc')
  const headSql = `select seq from ${s}.feed_head`
  const changesSql = `select ${SIGNAL_COLUMNS}, changed, removed_at is not null as removed from ${s}.signals where changed > $1 order by changed limit 1000`
  // @NOTE by-id reads answer as if the sweeper had already purged everything it may purge
  // (signals/purge.ts: unpinned and past expiry + grace, or removed + grace), so whether the sweep
  // has run yet never shows. $g is the grace in seconds; the 24 h purge floor only delays deletes.
  const kept = (x: string, g: string) =>
    `(${x}.pinned or ${x}.expires_at > now() - ${g}::int * interval '1 second')
     and (${x}.removed_at is null or ${x}.removed_at > now() - ${g}::int * interval '1 second')`
  const byIdSql = `select ${SIGNAL_COLUMNS} from ${s}.signals x where id = $1 and removed_at is null and ${kept('x', '$2')}`
  const repliesSql = `select ${SIGNAL_COLUMNS} from ${s}.signals x where ref_id = $1 and removed_at is null and ${kept('x', '$3')} order by seq limit $2`
  // @NOTE walks through removed signals so their replies stay in the thread, then hides the removed ones;
  // never through swept ones (their replies fall out of the thread once the row is purged anyway)
  const threadSql = `
    with recursive t as (
      select * from ${s}.signals x where id = $1 and ${kept('x', '$3')}
      union all
      select x.* from ${s}.signals x join t on x.ref_id = t.id where ${kept('x', '$3')}
    )
    select ${SIGNAL_COLUMNS} from t where removed_at is null order by seq limit $2`
  const existsSql = `select 1 from ${s}.signals x where id = $1 and removed_at is null and ${kept('x', '$2')}`
  const tagsSql = `
    select tag, count(*)::int as count from ${s}.signals x, unnest(x.tags) tag
    where x.removed_at is null and (x.pinned or x.expires_at > now()) and ($1::text is null or starts_with(tag, $1))
    group by tag order by count(*) desc, tag limit $2`
  const threadsSinceSql = `select count(*)::int as n from ${s}.signals where origin = $1 and ref_id is null and created_at > now() - interval '24 hours'`

  const params = (cursor: number, limit: number, f: ReadFilter, nowMs: number) => [
    cursor, limit, f.type, f.origin, f.tags, f.q, f.sinceMs, f.includeExpired, nowMs, f.refId,
  ]
  type PageRow = SignalRow & { head: string; changes: string }
  const toPage = (rows: PageRow[]): Page => ({
    head: Number(rows[0]?.head ?? 0),
    changes: Number(rows[0]?.changes ?? 0),
    signals: rows.filter((r) => r.id !== null).map(toSignal),
  })

  return {
    /** Matching signals with seq > cursor, oldest first, and the head they were read at. */
    async pageAfter(cursor: number, limit: number, f: ReadFilter, nowMs: number): Promise<Page> {
      return toPage((await db.query<PageRow>(afterSql, params(cursor, limit, f, nowMs))).rows)
    },
    /** The newest `limit` matching signals, oldest first (the bootstrap page without a cursor). */
    async newest(limit: number, f: ReadFilter, nowMs: number): Promise<Page> {
      const page = toPage((await db.query<PageRow>(newestSql, params(0, limit, f, nowMs))).rows)
      page.signals.reverse()
      return page
    },
    /** Pins, unpins and removals numbered above `since`, oldest first. */
    async changesSince(since: number): Promise<Change[]> {
      const { rows } = await db.query<SignalRow & { removed: boolean; changed: string }>(changesSql, [since])
      return rows.map((r) => ({ id: r.id, changed: Number(r.changed), signal: r.removed ? null : toSignal(r) }))
    },
    async head(): Promise<number> {
      const { rows } = await db.query<{ seq: string }>(headSql)
      return Number(rows[0]?.seq ?? 0)
    },
    async byId(id: string): Promise<Signal | null> {
      const { rows } = await db.query<SignalRow>(byIdSql, [id, grace])
      return rows[0] ? toSignal(rows[0]) : null
    },
    async replies(id: string, limit = 100): Promise<Signal[]> {
      return (await db.query<SignalRow>(repliesSql, [id, limit, grace])).rows.map(toSignal)
    },
    async thread(id: string, limit = 1000): Promise<Signal[]> {
      return (await db.query<SignalRow>(threadSql, [id, limit, grace])).rows.map(toSignal)
    },
    async exists(id: string): Promise<boolean> {
      return (await db.query(existsSql, [id, grace])).rowCount > 0
    },
    async tags(prefix: string | null, limit: number): Promise<Array<{ tag: string; count: number }>> {
      return (await db.query<{ tag: string; count: number }>(tagsSql, [prefix, limit])).rows
    },
    async threadsInLastDay(origin: string): Promise<number> {
      return (await db.query<{ n: number }>(threadsSinceSql, [origin])).rows[0]?.n ?? 0
    },
  }
}
export type SignalReader = ReturnType<typeof signalReader>
