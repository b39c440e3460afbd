import { READ_FILTERS, type FilterKey, type ReadFilter } from '../../domain/index.js'
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

/**
 * Each read filter of the domain's table (READ_FILTERS) in SQL: its parameter slot and type, the
 * per-row check (null: it is not a check; includeExpired moves the expiry cutoff, $9) and the
 * parameter's value. Keyed by the table, so a filter added there does not compile until it has
 * its SQL here. Slots $1, $2, $9, $11 and $12 are the paging parameters (page.ts).
 */
export const FILTER_SQL: { readonly [K in FilterKey]: { slot: number; type: string; check: string | null; value(v: ReadFilter[K]): unknown } } = {
  type: { slot: 3, type: 'text', check: 'x.type = $3', value: (v) => v },
  origin: { slot: 4, type: 'text', check: 'x.origin = $4', value: (v) => v },
  tags: { slot: 5, type: 'text[]', check: 'x.tags && $5::text[]', value: (v) => v },
  q: {
    slot: 6,
    type: 'text',
    check: `strpos(lower(x.type || chr(1) || array_to_string(x.tags, ' ') || chr(1) || x.origin || chr(1) || coalesce(x.origin_name, '') || chr(1) || x.payload), $6) > 0`,
    value: (v) => v,
  },
  // an instant as a timestamp: arithmetic on a parameter is folded into a custom plan but done per row in the generic one
  sinceMs: { slot: 7, type: 'timestamptz', check: 'x.created_at > $7::timestamptz', value: (v) => (v === null ? null : new Date(v)) },
  includeExpired: { slot: 8, type: 'bool', check: null, value: (v) => v },
  refId: { slot: 10, type: 'text', check: 'x.ref_id = $10', value: (v) => v },
}

/** The filter slots' values, in slot order ($3…$10 less $9): what page.ts sends for them. */
export function filterParams(f: ReadFilter): Map<number, unknown> {
  const out = new Map<number, unknown>()
  for (const field of READ_FILTERS) out.set(FILTER_SQL[field.key].slot, (FILTER_SQL[field.key].value as (v: unknown) => unknown)(f[field.key]))
  return out
}

/** The filters a drive's range already is (its index holds only matching rows). */
const DRIVEN: Record<Drive, FilterKey | null> = { ref: 'refId', tag: 'tags', origin: 'origin', type: 'type', seq: null }

/** Which of a read's filters the page statement must check per row: those set, and not the drive's own. */
export type Checks = { readonly [K in FilterKey]: boolean }

export function checksOf(f: ReadFilter): Checks {
  const driven = DRIVEN[driveOf(f)]
  const c = {} as Record<FilterKey, boolean>
  for (const field of READ_FILTERS) c[field.key] = field.key !== driven && (field.set as (v: unknown) => boolean)(f[field.key])
  return c
}

/** True when the drive's range is the whole filter but for liveness (expiry, removal). */
export function driveIsWholeFilter(f: ReadFilter): boolean {
  const c = checksOf(f)
  return READ_FILTERS.every((field) => !c[field.key] || FILTER_SQL[field.key].check === null)
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
  const native: Record<Exclude<Drive, 'tag'>, string> = { seq: 'true', type: FILTER_SQL.type.check!, origin: FILTER_SQL.origin.check!, ref: FILTER_SQL.refId.check! }
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
  const where = ['x.removed_at is null', live, ...READ_FILTERS.map((field) => (checks[field.key] ? FILTER_SQL[field.key].check : null)).filter((c) => c !== null)]
  // every parameter slot is typed here, whether or not this text checks it
  const typed = ['$1::int8 as p1', '$2::int8 as p2', '$11::int8 as p11', ...READ_FILTERS.map((field) => {
    const { slot, type } = FILTER_SQL[field.key]
    return `$${slot}::${type} as p${slot}`
  })].join(', ')
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
