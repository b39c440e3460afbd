import type { ReadFilter } from '../../domain/index.js'
import type { Ident } from '../types.js'
import { unexpiredAt } from './retention.js'

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

/** Which of a read's filters the page statement must check per row (the rest are absent or the drive's own). */
export interface Checks {
  type: boolean
  origin: boolean
  tags: boolean
  q: boolean
  since: boolean
  ref: boolean
  /** includeExpired: expired signals inside the grace pass. */
  expired: boolean
}

export function checksOf(f: ReadFilter): Checks {
  const drive = driveOf(f)
  return {
    type: f.type !== null && drive !== 'type',
    origin: f.origin !== null && drive !== 'origin',
    tags: f.tags.length > 0 && drive !== 'tag',
    q: f.q !== null,
    since: f.sinceMs !== null,
    ref: f.refId !== null && drive !== 'ref',
    expired: f.includeExpired,
  }
}

/**
 * One page query. Parameters: $1 the cursor (forward: seq > $1) or the bound (backward: seq ≤ $1,
 * null for the head), $3…$10 the filters, $12 the authority (JSON select lists only); `limit` (the
 * page size, also $2) and `batch` (candidates, index entries, it may examine, also $11) are
 * written in as constants (page.ts LADDER).
 *
 * The candidates, at most `batch` seqs of the drive's range in order, are fetched with their rows
 * first (`materialized`: a fixed, small set), then the filters in `checks` and liveness are checked
 * on each and the first `limit` that pass are returned. The head row always comes back, with `n`
 * (candidates examined) and `edge` (the last of them, in the walking direction): when n = `batch` the
 * walk stopped there, else it reached the end of the range. Only the checks a read needs are in
 * its text.
 */
export interface Shape {
  drive: Drive
  dir: 'after' | 'before'
  /** The newest page's first statement: from the head ($1 unused). */
  fromHead: boolean
  /** One tag: its range alone, no merge. */
  oneTag: boolean
}

export function pageSql(s: Ident, shape: Shape, select: string, checks: Checks, limit: number, batch: number): string {
  const { drive, dir, fromHead, oneTag } = shape
  if (!Number.isSafeInteger(limit) || !Number.isSafeInteger(batch)) throw new Error('page sizes must be integers')
  const fwd = dir === 'after'
  const order = fwd ? 'asc' : 'desc'
  // @NOTE one-sided on purpose: rows above the head are not visible in this statement's snapshot
  // (a batch moves feed_head and inserts its rows in one transaction), and without statistics the
  // planner rates a two-sided range as a handful of rows, then reads them all with a bitmap and
  // sorts, rather than walking the ordered index and stopping at the page
  // (the newest page starts at the head itself, not at coalesce($1, head): a prepared statement
  // settles on PostgreSQL's generic plan only when it costs what the custom plans do)
  const bound = fwd ? `seq > $1::int8` : fromHead ? `seq <= (select head from h)` : `seq <= $1::int8`
  const native: Record<Exclude<Drive, 'tag'>, string> = { seq: 'true', type: 'x.type = $3', origin: 'x.origin = $4', ref: 'x.ref_id = $10' }
  const candidates =
    drive === 'tag' && oneTag
      ? `select x.* from (select g.seq from ${s}.signal_tags g where g.tag = ($5::text[])[1] and g.${bound} order by g.seq ${order} limit ${batch}) k
         join ${s}.signals x on x.seq = k.seq`
      : drive === 'tag'
      ? // the first `batch` of each tag's range, merged: their first `batch` are the first of the union
        `select x.* from (
           select distinct g.seq from unnest($5::text[]) t(tag) cross join lateral (
             select g.seq from ${s}.signal_tags g where g.tag = t.tag and g.${bound} order by g.seq ${order} limit ${batch}
           ) g order by g.seq ${order} limit ${batch}
         ) k join ${s}.signals x on x.seq = k.seq`
      : `select x.* from ${s}.signals x where ${native[drive]} and x.${bound} order by x.seq ${order} limit ${batch}`
  // $9 is the expiry cutoff (now, or now less the grace with includeExpired), $7 the `since`
  // instant, both as timestamps: arithmetic on a parameter is folded into a custom plan but done
  // per row in the generic one, which then never looks as cheap
  const live = unexpiredAt('x.', '$9::timestamptz') // the retention rule's expiry half (retention.ts)
  const where = [
    'x.removed_at is null',
    live,
    checks.type && 'x.type = $3',
    checks.origin && 'x.origin = $4',
    checks.tags && 'x.tags && $5::text[]',
    checks.q &&
      `strpos(lower(x.type || chr(1) || array_to_string(x.tags, ' ') || chr(1) || x.origin || chr(1) || coalesce(x.origin_name, '') || chr(1) || x.payload), $6) > 0`,
    checks.since && `x.created_at > $7::timestamptz`,
    checks.ref && 'x.ref_id = $10',
  ].filter((c) => typeof c === 'string')
  // every parameter slot is typed here, whether or not this text checks it
  const typed = `$1::int8 as p1, $2::int8 as p2, $11::int8 as p11, $3::text as p3, $4::text as p4, $5::text[] as p5, $6::text as p6, $7::timestamptz as p7, $8::bool as p8, $10::text as p10`
  return `
    with h as (select seq as head, changes, failover_seq as epoch, ${typed} from ${s}.feed_head limit 1),
    c as materialized (${candidates}),
    p as (select ${select}, x.seq as page_seq from c x where ${where.join(' and ')} order by x.seq ${order} limit ${limit})
    select h.head, h.changes, h.epoch, (select count(*) from c) as n, (select ${fwd ? 'max' : 'min'}(seq) from c) as edge, p.*
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
