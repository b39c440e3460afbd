import type { Signal } from '../../domain/index.js'
import type { Ident, Queryable } from '../types.js'
import { chunkReader } from './chunk.js'
import { gapReader } from './gaps.js'
import { pageReader } from './page.js'
import { kept as keptBy } from './retention.js'
import { signalColumns, toSignal, type SignalRow } from './row.js'

export { SCAN_BUDGET, TEXT_SCAN_BUDGET, type Page } from './page.js'
export type { SeqChunk } from './chunk.js'

/** A thread read walks at most this many reply levels below its root… */
const THREAD_MAX_DEPTH = 64
/** …and at most this many signals (removed ones included), before fetching its page of at most 1,000. */
const THREAD_WALK_ROWS = 5000

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
  const pages = pageReader(db, s, grace)
  const gaps = gapReader(db, s, grace)
  const headSql = `select seq from ${s}.feed_head`
  const changesSql = `select ${signalColumns()}, changed, removed_at is not null as removed from ${s}.signals where changed > $1 order by changed limit 1000`
  // @NOTE by-id reads answer as if the sweeper had already purged everything it may purge (the
  // retention rule, retention.ts), so whether the sweep has run yet never shows. $g is the grace in seconds.
  const kept = (x: string, g: string) => keptBy(`${x}.`, `${g}::int`)
  const byIdSql = `select ${signalColumns('x')} from ${s}.signals x where id = $1 and removed_at is null and ${kept('x', '$2')}`
  const repliesSql = `select ${signalColumns('x')} from ${s}.signals x where ref_id = $1 and removed_at is null and ${kept('x', '$3')} order by seq limit $2`
  // @NOTE walks through removed signals so their replies stay in the thread, then hides the removed ones;
  // never through swept ones (their replies fall out of the thread once the row is purged anyway).
  // The walk carries ids only, at most THREAD_MAX_DEPTH levels and THREAD_WALK_ROWS rows (the CTE
  // is evaluated only as far as its reader fetches), so a huge thread costs a bounded walk plus
  // one page of rows with their payloads, never every descendant's payload.
  const threadSql = `
    with recursive t as (
      select x.id, x.removed_at, 0 as depth from ${s}.signals x where id = $1 and ${kept('x', '$3')}
      union all
      select x.id, x.removed_at, t.depth + 1 from ${s}.signals x join t on x.ref_id = t.id
      where t.depth < ${THREAD_MAX_DEPTH} and ${kept('x', '$3')}
    ), walked as materialized (select id, removed_at from t limit ${THREAD_WALK_ROWS})
    select ${signalColumns('x')} from ${s}.signals x
    where x.id in (select id from walked where removed_at is null) order by x.seq limit $2`
  const existsSql = `select 1 from ${s}.signals x where id = $1 and removed_at is null and ${kept('x', '$2')}`
  const tagsSql = `
    select tag, count(*)::int as count from ${s}.signals x, unnest(x.tags) tag
    where x.removed_at is null and (x.pinned or x.expires_at > now()) and ($1::text is null or starts_with(tag, $1))
    group by tag order by count(*) desc, tag limit $2`
  const threadsSinceSql = `select count(*)::int as n from ${s}.signals where origin = $1 and ref_id is null and created_at > now() - interval '24 hours'`

  return {
    pageAfter: pages.pageAfter,
    newest: pages.newest,
    pageAfterJson: pages.pageAfterJson,
    newestJson: pages.newestJson,
    /** Every signal not removed with lo < seq <= min(hi, head), as JSON with its tags and expiry (feed/chunk-cache.ts). */
    chunk: chunkReader(db, s),
    /** Whether the board still keeps every signal numbered in (after, upTo]: false is a possible gap (gaps.ts). */
    keepsAll: gaps.keepsAll,
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
