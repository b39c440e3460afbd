import type { ReadFilter } from '../../domain/index.js'
import type { Ident } from '../types.js'

/**
 * The ordered index range a page query walks: a read drives from its most selective filter, the
 * rest are checked per row (docs/architecture.md, "Reading far behind the head"). Without
 * statistics nothing tells which filter is sparser, so the order is fixed: a reply's parent (one
 * thread), tags, origin, type, and the primary key when none of those is given.
 */
export type Drive = 'ref' | 'tag' | 'origin' | 'type' | 'seq'

export function driveOf(f: ReadFilter): Drive {
  if (f.refId !== null) return 'ref'
  if (f.tags.length > 0) return 'tag'
  if (f.origin !== null) return 'origin'
  if (f.type !== null) return 'type'
  return 'seq'
}

/** True when the drive's range is the whole filter but for liveness (expiry, removal). */
export function driveIsWholeFilter(f: ReadFilter): boolean {
  const others = [f.refId, f.origin, f.type, f.q, f.sinceMs].filter((x) => x !== null).length + (f.tags.length > 0 ? 1 : 0)
  return others <= (driveOf(f) === 'seq' ? 0 : 1)
}

/**
 * One page query. Parameters: $1 the cursor (forward: seq > $1) or the bound (backward: seq ≤ $1,
 * null for the head), $2 the page size, $3…$10 the filters (a null or an empty array is "no
 * filter"), $11 the number of candidates (index entries) the query may examine, $12 the authority
 * (JSON select lists only).
 *
 * The candidates, at most $11 seqs of the drive's range in order, are fetched with their rows
 * first (`materialized`: a fixed, small set), then every filter is checked on each and the first
 * $2 that pass are returned. The head row always comes back, with `n` (candidates examined) and
 * `edge` (the last of them, in the walking direction): when n = $11 the walk stopped there, else
 * it reached the end of the range.
 */
export function pageSql(s: Ident, drive: Drive, dir: 'after' | 'before', select: string, graceSeconds: number): string {
  const fwd = dir === 'after'
  const order = fwd ? 'asc' : 'desc'
  // @NOTE one-sided on purpose: rows above the head are not visible in this statement's snapshot
  // (a batch moves feed_head and inserts its rows in one transaction), and without statistics the
  // planner rates a two-sided range as a handful of rows, then reads them all with a bitmap and
  // sorts, rather than walking the ordered index and stopping at the page
  const bound = fwd ? `seq > $1::int8` : `seq <= coalesce($1::int8, (select head from h))`
  const native: Record<Exclude<Drive, 'tag'>, string> = { seq: 'true', type: 'x.type = $3', origin: 'x.origin = $4', ref: 'x.ref_id = $10' }
  const candidates =
    drive === 'tag'
      ? // the first $11 of each tag's range, merged: their first $11 are the first $11 of the union
        `select x.* from (
           select distinct g.seq from unnest($5::text[]) t(tag) cross join lateral (
             select g.seq from ${s}.signal_tags g where g.tag = t.tag and g.${bound} order by g.seq ${order} limit $11
           ) g order by g.seq ${order} limit $11
         ) k join ${s}.signals x on x.seq = k.seq`
      : `select x.* from ${s}.signals x where ${native[drive]} and x.${bound} order by x.seq ${order} limit $11`
  const at = (ms: string) => `timestamptz 'epoch' + ${ms}::int8 * interval '1 millisecond'`
  return `
    with h as (select seq as head, changes from ${s}.feed_head limit 1),
    c as materialized (${candidates}),
    p as (
      select ${select}, x.seq as page_seq from c x
      where x.removed_at is null
        and ($3::text is null or x.type = $3)
        and ($4::text is null or x.origin = $4)
        and (cardinality($5::text[]) = 0 or coalesce(x.tags && $5::text[], false))
        and ($6::text is null or strpos(lower(x.type || chr(1) || array_to_string(x.tags, ' ') || chr(1) || x.origin
             || chr(1) || coalesce(x.origin_name, '') || chr(1) || x.payload), $6) > 0)
        and ($7::int8 is null or x.created_at > ${at('$7')})
        and ($8::bool or x.pinned or x.expires_at > ${at('$9')})
        and (x.pinned or x.expires_at > ${at('$9')} - ${graceSeconds}::int * interval '1 second')
        and ($10::text is null or x.ref_id = $10)
      order by x.seq ${order} limit $2
    )
    select h.head, h.changes, (select count(*) from c) as n, (select ${fwd ? 'max' : 'min'}(seq) from c) as edge, p.*
    from h left join p on true order by p.page_seq ${order}`
}

const iso = (col: string) =>
  `to_char(date_trunc('milliseconds', ${col} + interval '0.5 milliseconds') at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`
const str = (expr: string) => `to_json(${expr})::text`
const orNull = (expr: string) => `coalesce(${str(expr)}, 'null')`

/**
 * A signal's emitted JSON built by PostgreSQL, byte for byte what serializeSignal writes (the
 * field order of EMITTED_SIGNAL_FIELDS; to_json escapes as JSON.stringify does; times are rounded
 * to the millisecond as `toSignal` reads them), so a page costs this process no work per row.
 * `auth` is the SQL text of the authority parameter.
 */
export function signalJsonSql(x: string, auth: string): string {
  const uri = (id: string) => `'sw://' || ${auth}::text || '/signals/' || ${id}`
  return (
    `'{"id":' || ${str(`${x}.id`)} || ',"uri":' || ${str(uri(`${x}.id`))} || ',"origin":' || ${str(`${x}.origin`)}` +
    ` || ',"originName":' || ${orNull(`${x}.origin_name`)} || ',"originUri":' || ${str(`${x}.origin_uri`)}` +
    ` || ',"originVerified":' || ${x}.origin_verified::text || ',"type":' || ${str(`${x}.type`)}` +
    ` || ',"tags":' || array_to_json(${x}.tags)::text || ',"payload":' || ${x}.payload || ',"ttl":' || ${x}.ttl_seconds::text` +
    ` || ',"boostBits":0,"pinned":' || ${x}.pinned::text || ',"refId":' || ${orNull(`${x}.ref_id`)}` +
    ` || ',"refUri":' || ${orNull(uri(`${x}.ref_id`))}` +
    ` || ',"createdAt":"' || ${iso(`${x}.created_at`)} || '","expiresAt":"' || ${iso(`${x}.expires_at`)} || '"}' as json`
  )
}
