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
 * The page statement's parameters by name, in the order PostgreSQL numbers them: a fragment refers
 * to one as `P.type` (its `$n`) and page.ts sends their values by name (pageParams), so no number
 * is written by hand. The order is the one the statement has always had, so its texts (and the
 * prepared statements named by their hash) did not change. `authority` is last: only the JSON
 * select list refers to it, and a statement without it is sent one value fewer.
 */
export const PAGE_PARAMS = Object.freeze([
  'from',
  'limit',
  'type',
  'origin',
  'tags',
  'q',
  'sinceMs',
  'includeExpired',
  'cutoff',
  'refId',
  'batch',
  'authority',
] as const)
export type PageParam = (typeof PAGE_PARAMS)[number]
// every read filter is a parameter: a filter added to READ_FILTERS does not compile until it has its place above
const everyFilterHasAPlace: [Exclude<FilterKey, PageParam>] extends [never] ? true : never = true
void everyFilterHasAPlace

/** Each parameter's `$n` in the page statement. */
export const P = Object.freeze(Object.fromEntries(PAGE_PARAMS.map((name, i) => [name, `$${i + 1}`]))) as {
  readonly [K in PageParam]: string
}

/**
 * Each read filter of the domain's table (READ_FILTERS) in SQL: its parameter's type, the per-row
 * check (null: it is not a check; includeExpired moves the expiry cutoff, `P.cutoff`) and the
 * parameter's value. Keyed by the table, so a filter added there does not compile until it has
 * its SQL here.
 */
const FILTER_SQL: { readonly [K in FilterKey]: { type: string; check: string | null; value(v: ReadFilter[K]): unknown } } = {
  type: { type: 'text', check: `x.type = ${P.type}`, value: (v) => v },
  origin: { type: 'text', check: `x.origin = ${P.origin}`, value: (v) => v },
  tags: { type: 'text[]', check: `x.tags && ${P.tags}::text[]`, value: (v) => v },
  q: {
    type: 'text',
    check: `strpos(lower(x.type || chr(1) || array_to_string(x.tags, ' ') || chr(1) || x.origin || chr(1) || coalesce(x.origin_name, '') || chr(1) || x.payload), ${P.q}) > 0`,
    value: (v) => v,
  },
  // an instant as a timestamp: arithmetic on a parameter is folded into a custom plan but done per row in the generic one
  sinceMs: { type: 'timestamptz', check: `x.created_at > ${P.sinceMs}::timestamptz`, value: (v) => (v === null ? null : new Date(v)) },
  includeExpired: { type: 'bool', check: null, value: (v) => v },
  refId: { type: 'text', check: `x.ref_id = ${P.refId}`, value: (v) => v },
}

/** What one page statement is sent: the paging values, the read's filters, and the authority for the JSON select list (else null). */
export interface PageArgs {
  from: number | null
  limit: number
  batch: number
  cutoff: Date
  filter: ReadFilter
  authority: string | null
}

const isFilter = (name: PageParam): name is FilterKey => name in FILTER_SQL
const PAGING_VALUES: { readonly [K in Exclude<PageParam, FilterKey>]: (a: PageArgs) => unknown } = {
  from: (a) => a.from,
  limit: (a) => a.limit,
  batch: (a) => a.batch,
  cutoff: (a) => a.cutoff,
  authority: (a) => a.authority,
}
/** Each parameter's value from a statement's arguments, in PAGE_PARAMS' order (made once). */
const VALUES: ReadonlyArray<(a: PageArgs) => unknown> = PAGE_PARAMS.map((name) =>
  isFilter(name) ? (a: PageArgs) => (FILTER_SQL[name].value as (v: unknown) => unknown)(a.filter[name]) : PAGING_VALUES[name],
)

/** The values of a page statement's parameters, in their order ($1, $2, …): the authority only with the JSON select list. */
export function pageParams(a: PageArgs): unknown[] {
  const n = a.authority === null ? VALUES.length - 1 : VALUES.length
  const out: unknown[] = []
  for (let i = 0; i < n; i++) out.push(VALUES[i]!(a))
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
 * One page query. Parameters (PAGE_PARAMS): `from` the cursor (forward: seq > from) or the bound
 * (backward: seq ≤ from; unused from the head), the filters, `cutoff` the expiry cutoff, `authority`
 * (JSON select lists only); `limit` (the page size) and `batch` (candidates, index entries, it may
 * examine) are sent too but written in as constants (page.ts LADDER).
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
  // (the newest page starts at the head itself, not at coalesce(from, head): a prepared statement
  // settles on PostgreSQL's generic plan only when it costs what the custom plans do)
  const bound = fwd ? `seq > ${P.from}::int8` : fromHead ? `seq <= (select head from h)` : `seq <= ${P.from}::int8`
  const native: Record<Exclude<Drive, 'tag'>, string> = {
    seq: 'true',
    type: FILTER_SQL.type.check!,
    origin: FILTER_SQL.origin.check!,
    ref: FILTER_SQL.refId.check!,
  }
  const candidates =
    drive === 'tag' && oneTag
      ? `select x.* from (select g.seq from ${s}.signal_tags g where g.tag = (${P.tags}::text[])[1] and g.${bound} order by g.seq ${order} limit ${batch}) k
         join ${s}.signals x on x.seq = k.seq`
      : drive === 'tag'
        ? // the first `batch` of each tag's range, merged: their first `batch` are the first of the union
          `select x.* from (
           select distinct g.seq from unnest(${P.tags}::text[]) t(tag) cross join lateral (
             select g.seq from ${s}.signal_tags g where g.tag = t.tag and g.${bound} order by g.seq ${order} limit ${batch}
           ) g order by g.seq ${order} limit ${batch}
         ) k join ${s}.signals x on x.seq = k.seq`
        : `select x.* from ${s}.signals x where ${native[drive]} and x.${bound} order by x.seq ${order} limit ${batch}`
  // `cutoff` is the expiry cutoff (now, or now less the grace with includeExpired), `sinceMs` the
  // instant, both as timestamps: arithmetic on a parameter is folded into a custom plan but done
  // per row in the generic one, which then never looks as cheap
  const live = unexpiredAt('x.', `${P.cutoff}::timestamptz`) // the retention rule's expiry half (retention.ts)
  const where = [
    'x.removed_at is null',
    live,
    ...READ_FILTERS.map((field) => (checks[field.key] ? FILTER_SQL[field.key].check : null)).filter((c) => c !== null),
  ]
  // every parameter is typed here, whether or not this text checks it (the cutoff and the authority carry their casts where they are used)
  const typed = [
    typedAs('from', 'int8'),
    typedAs('limit', 'int8'),
    typedAs('batch', 'int8'),
    ...READ_FILTERS.map((field) => typedAs(field.key, FILTER_SQL[field.key].type)),
  ].join(', ')
  return `
    with h as (select seq as head, changes, failover_seq as epoch, ${typed} from ${s}.feed_head limit 1),
    c as materialized (${candidates}),
    p as (select ${select}, x.seq as page_seq from c x where ${where.join(' and ')} order by x.seq ${order} limit ${limit})
    select h.head, h.changes, h.epoch, (select count(*) from c) as n, (select ${fwd ? 'max' : 'min'}(seq) from c) as edge, p.*
    from h left join p on true order by p.page_seq ${order}`
}

/** `$n::type as pn`: a parameter typed in the statement's first select list. */
const typedAs = (name: PageParam, type: string) => `${P[name]}::${type} as p${P[name].slice(1)}`

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
