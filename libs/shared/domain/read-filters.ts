import { invalid } from './errors.js'
import { LIMITS } from './limits.js'
import { charLength, normaliseTags } from './envelope.js'
import { parseSignalRef } from './ids.js'
import { isActive, survivesGrace, type Signal } from './signal.js'

/** What a read selects. Evaluated in SQL (db/signals/page.ts) and in memory (matchesFilter) alike. */
export interface ReadFilter {
  type: string | null
  tags: string[] // OR
  origin: string | null
  q: string | null // lower-cased; literal substring
  sinceMs: number | null // strictly after
  includeExpired: boolean
  /** Wire extension: only direct replies to this signal id. */
  refId: string | null
}
export type FilterKey = keyof ReadFilter

/** Bounds on a read's filters, so one request's matching work is bounded (docs/security.md). */
const READ_FILTER_LIMITS = Object.freeze({
  /** Tags in one read after splitting on commas and normalising: as many as a signal may carry. */
  maxTags: LIMITS.maxTags,
  /** Characters of `q` after trimming. */
  maxQLength: 256,
})

/** What a field's parameter is, for the typed surfaces (zod for OpenAPI, MCP and A2A). */
export type FilterKind = 'text' | 'tags' | 'since' | 'flag'

/** The places a page of a read can come from (feed/page-sources.ts lists them in the order they are asked). */
export const PAGE_SOURCE_NAMES = Object.freeze(['tail', 'chunks', 'database'] as const)
export type PageSourceName = (typeof PAGE_SOURCE_NAMES)[number]

/** One read filter: the query parameter, how it parses, how a signal matches it, and how it is described. */
export interface FilterField<K extends FilterKey = FilterKey> {
  readonly key: K
  readonly param: string
  readonly kind: FilterKind
  /** For OpenAPI and the agent tools. */
  readonly description: string
  /** The value from the parameter's text (null: absent); invalid_request for garbage. */
  parse(raw: Raw, ctx: ParseContext): ReadFilter[K]
  /**
   * Which page sources can answer a read with this filter set (feed/page-sources.ts asks a source
   * only when every filter set in the read says it can): the tail matches every filter in memory
   * (`match`), the database in SQL (db/signals/page-sql.ts), the chunk cache indexes only tags and
   * expiry. Every source is a required key, so a new filter must say for each, and a new source
   * must be said by every filter.
   */
  readonly sources: { readonly [S in PageSourceName]: boolean }
  /** Narrows the read (a non-default value). */
  set(v: ReadFilter[K]): boolean
  /** Whether `s` passes; `search` is its lower-cased search text. Called only when the field is set. */
  match(s: Signal, v: ReadFilter[K], search: () => string): boolean
}

export type Raw = Record<string, unknown>
export interface ParseContext {
  nowMs: number
  authority: string
}

const field = <K extends FilterKey>(f: FilterField<K>) => Object.freeze(f)

/**
 * The one table of read filters. The query parser, the in-memory matcher, the waiters' grouping
 * key, the SQL filter parameters (db/signals/page-sql.ts) and the parameter descriptions of the OpenAPI
 * document, MCP and A2A all derive from it: a filter added here reaches all of them, and the
 * compiler asks for its SQL.
 */
export const READ_FILTERS = Object.freeze([
  field({
    key: 'type',
    sources: { tail: true, chunks: false, database: true },
    param: 'type',
    kind: 'text',
    description: 'Only signals of this $type (exact match), e.g. "reply".',
    parse: (raw) => nonEmpty(single(raw, 'type')),
    set: (v) => v !== null,
    match: (s, v) => s.type === v,
  }),
  field({
    key: 'tags',
    sources: { tail: true, chunks: true, database: true },
    param: 'tag',
    kind: 'tags',
    description: `Only signals with this tag (case-insensitive). Several tags (at most ${READ_FILTER_LIMITS.maxTags}), repeated or comma-separated, match any of them.`,
    parse: (raw) => parseTagParam(raw.tag),
    set: (v) => v.length > 0,
    match: (s, v) => v.some((t) => s.tags.includes(t)),
  }),
  field({
    key: 'origin',
    sources: { tail: true, chunks: false, database: true },
    param: 'origin',
    kind: 'text',
    description: 'Only signals published by this identity id (the "origin" field of a signal).',
    parse: (raw) => nonEmpty(single(raw, 'origin')),
    set: (v) => v !== null,
    match: (s, v) => s.origin === v,
  }),
  field({
    key: 'q',
    sources: { tail: true, chunks: false, database: true },
    param: 'q',
    kind: 'text',
    description: `Case-insensitive substring (at most ${READ_FILTER_LIMITS.maxQLength} characters) searched in type, tags, origin, originName and payload text.`,
    parse: (raw) => parseQ(single(raw, 'q')),
    set: (v) => v !== null,
    match: (_s, v, search) => search().includes(v!),
  }),
  field({
    key: 'sinceMs',
    sources: { tail: true, chunks: false, database: true },
    param: 'since',
    kind: 'since',
    description:
      'Only signals created after this: an ISO 8601 timestamp, Unix seconds, or a duration back from now such as "90s", "15m", "2h", "1d".',
    parse: (raw, ctx) => {
      const since = single(raw, 'since')
      return since === null || since.trim() === '' ? null : parseSince(since.trim(), ctx.nowMs)
    },
    set: (v) => v !== null,
    match: (s, v) => s.createdAtMs > v!,
  }),
  field({
    key: 'includeExpired',
    sources: { tail: true, chunks: true, database: true },
    param: 'includeExpired',
    kind: 'flag',
    description: 'Also return expired signals that are not swept yet (default false).',
    parse: (raw) => {
      const v = single(raw, 'includeExpired')
      if (v !== null && !['0', '1', 'true', 'false'].includes(v)) throw invalid('includeExpired must be 1 or 0')
      return v === '1' || v === 'true'
    },
    set: (v) => v,
    match: () => true, // widens the read: matchesFilter applies expiry itself
  }),
  field({
    key: 'refId',
    sources: { tail: true, chunks: false, database: true },
    param: 'ref',
    kind: 'text',
    description:
      'Wire extension: only direct replies to this signal, by id or sw:// URI. With the cursor a publish answered, this waits exactly for its replies.',
    parse: (raw, ctx) => {
      const ref = nonEmpty(single(raw, 'ref'))
      return ref === null ? null : parseSignalRef(ref, ctx.authority)
    },
    set: (v) => v !== null,
    match: (s, v) => s.refId === v,
  }),
] as const satisfies readonly FilterField[])

/** The filters of `raw`, every field of the table parsed. */
export function parseFilter(raw: Raw, ctx: ParseContext): ReadFilter {
  const f = {} as Record<FilterKey, unknown>
  for (const field of READ_FILTERS) f[field.key] = field.parse(raw, ctx)
  return f as unknown as ReadFilter
}

const servesAll = () => true

/**
 * Whether page source `source` can answer a read with filter `f`, as a function made once per
 * source (it runs on every read): no filter the source cannot apply is set, by the table's
 * `sources` column.
 */
export function servedBy(source: PageSourceName): (f: ReadFilter) => boolean {
  // a name cast past the compiler: a source no filter has said anything about is no source
  if (!READ_FILTERS.every((field) => typeof field.sources[source] === 'boolean'))
    throw new Error(`page source ${source}: no column in READ_FILTERS' sources`)
  const cannot: ReadonlyArray<FilterField> = READ_FILTERS.filter((field) => !field.sources[source])
  if (cannot.length === 0) return servesAll
  return (f) => {
    for (const field of cannot) if ((field.set as (v: unknown) => boolean)(f[field.key])) return false
    return true
  }
}

/** True when no field narrows the read. */
export const unfiltered = (f: ReadFilter) => READ_FILTERS.every((field) => !(field.set as (v: unknown) => boolean)(f[field.key]))

/** The filter as one string: reads with equal keys select the same signals (the waiters group by it). */
export const filterKey = (f: ReadFilter) => JSON.stringify(READ_FILTERS.map((field) => f[field.key]))

/** The text `q` searches, the same in SQL (`searchTextSql`) and here: fields joined by U+0001. */
export const searchText = (s: Signal) =>
  [s.type, s.tags.join(' '), s.origin, s.originName ?? '', s.payloadText].join('\u0001').toLowerCase()

/**
 * The in-memory twin of the SQL filter (db/signals/page.ts). A signal past expiry + `graceMs` counts
 * as swept even before the sweeper deletes it, so `includeExpired` never shows what by-id reads hide.
 * `search`: the signal's searchText, when the caller keeps it (the tail does), so `q` never redoes it.
 */
export function matchesFilter(s: Signal, f: ReadFilter, nowMs: number, graceMs = Infinity, search?: string): boolean {
  if (!f.includeExpired && !isActive(s, nowMs)) return false
  if (!survivesGrace(s, nowMs, graceMs)) return false
  const matchers = matchersOf(f)
  if (matchers.length === 0) return true
  const text = () => search ?? searchText(s)
  for (const [match, v] of matchers) if (!match(s, v, text)) return false
  return true
}

/** A field's in-memory matcher and the value the filter gives it. */
type Matcher = [(s: Signal, v: unknown, search: () => string) => boolean, unknown]
/** The fields a filter sets, worked out once per filter object (a feed's followers share frozen queries). */
const matchersByFilter = new WeakMap<ReadFilter, Matcher[]>()
function matchersOf(f: ReadFilter): Matcher[] {
  let c = matchersByFilter.get(f)
  if (c === undefined) {
    c = []
    for (const field of READ_FILTERS) {
      const v = f[field.key]
      if ((field.set as (v: unknown) => boolean)(v)) c.push([field.match as Matcher[0], v])
    }
    matchersByFilter.set(f, c)
  }
  return c
}

export function single(raw: Raw, name: string): string | null {
  const v = raw[name]
  if (v === undefined) return null
  if (typeof v !== 'string') throw invalid(`${name} must be given once`)
  if (v.length > 1024) throw invalid(`${name} is too long`)
  return checkText(v, name)
}

function checkText(v: string, name: string) {
  if (v.includes('\u0000') || !v.isWellFormed()) throw invalid(`${name} contains invalid characters`)
  return v
}

const nonEmpty = (v: string | null) => (v === null || v.trim() === '' ? null : v.trim())

function parseQ(q: string | null): string | null {
  const text = q?.trim()
  if (!text) return null
  if ([...text].length > READ_FILTER_LIMITS.maxQLength) throw invalid(`q is longer than ${READ_FILTER_LIMITS.maxQLength} characters`)
  return text.toLowerCase()
}

function parseTagParam(v: unknown): string[] {
  if (v === undefined) return []
  const list = Array.isArray(v) ? v : [v]
  if (list.length > 64 || list.some((t) => typeof t !== 'string' || t.length > 1024)) throw invalid('tag is malformed')
  const tags = normaliseTags(list.flatMap((t: string) => checkText(t, 'tag').split(',')))
  if (tags.length > READ_FILTER_LIMITS.maxTags) throw invalid(`at most ${READ_FILTER_LIMITS.maxTags} tags in one read`)
  if (tags.some((t) => charLength(t) > LIMITS.maxTagLength)) throw invalid(`a tag is longer than ${LIMITS.maxTagLength} characters`)
  return tags
}

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }

/**
 * ISO 8601 timestamp, Unix seconds, or a duration back from now (`90s`, `15m`, `2h`, `1d`).
 * @NOTE no signal predates the Unix epoch, so earlier instants are clamped to it: "everything",
 * and never a timestamp PostgreSQL cannot represent (`999999999d` would be 2.7 million years ago).
 */
export function parseSince(v: string, nowMs: number): number {
  return Math.max(0, sinceInstant(v, nowMs))
}

function sinceInstant(v: string, nowMs: number): number {
  const dur = /^(\d{1,9})([smhd])$/.exec(v)
  if (dur) return nowMs - Number(dur[1]) * UNIT_MS[dur[2]!]!
  if (/^\d{1,12}(\.\d+)?$/.test(v)) return Math.floor(Number(v) * 1000)
  const iso = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)([Zz]|[+-]\d{2}:?\d{2})?)?$/.exec(v)
  if (iso) {
    const [, y, mo, d, time, zone] = iso
    // a timestamp without a zone is UTC (never the server's local time); 2030-02-30 is no date
    const ms = Date.parse(`${y}-${mo}-${d}T${time ?? '00:00'}${zone ?? 'Z'}`)
    const day = new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d)))
    if (Number.isFinite(ms) && day.getUTCDate() === Number(d) && day.getUTCMonth() === Number(mo) - 1) return ms
  }
  throw invalid('since must be an ISO 8601 timestamp, Unix seconds, or a duration such as 15m')
}
