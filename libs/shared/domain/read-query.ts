import { invalid } from './errors.js'
import { LIMITS } from './limits.js'
import { charLength, normaliseTags } from './envelope.js'
import { parseSignalRef } from './ids.js'
import { isActive, type Signal } from './signal.js'

/** What a read selects. Evaluated in SQL (db/signals/read.ts) and in memory (matchesFilter) alike. */
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

export interface ReadQuery extends ReadFilter {
  cursor: number | null
  limit: number
  waitMs: number
}

type Raw = Record<string, unknown>

/** Bounds on a read's filters, so one request's matching work is bounded (docs/security.md). */
export const READ_FILTER_LIMITS = Object.freeze({
  /** Tags in one read after splitting on commas and normalising: as many as a signal may carry. */
  maxTags: LIMITS.maxTags,
  /** Characters of `q` after trimming. */
  maxQLength: 256,
})

/**
 * Query string → ReadQuery (docs/protocol.md "Reading"). Garbage → invalid_request, never a throw of
 * another kind. `authority` is this board's: a `ref` given as an sw:// URI must name it.
 */
export function parseReadQuery(raw: Raw, nowMs: number, authority: string): ReadQuery {
  const cursor = parseCursor(raw)
  const limit = optionalInt(raw, 'limit', Number.MIN_SAFE_INTEGER)
  const wait = single(raw, 'wait')
  let waitSeconds = 0
  if (wait !== null) {
    if (!/^-?\d+(\.\d+)?$/.test(wait)) throw invalid('wait must be a number of seconds')
    waitSeconds = Math.min(LIMITS.maxWaitSeconds, Math.max(0, Number(wait)))
  }
  const includeExpired = single(raw, 'includeExpired')
  if (includeExpired !== null && !['0', '1', 'true', 'false'].includes(includeExpired)) throw invalid('includeExpired must be 1 or 0')
  const since = single(raw, 'since')
  const q = single(raw, 'q')
  const ref = nonEmpty(single(raw, 'ref'))
  return {
    cursor,
    limit: limit === null ? LIMITS.maxLimit : Math.min(LIMITS.maxLimit, Math.max(1, limit)),
    waitMs: Math.round(waitSeconds * 1000),
    type: nonEmpty(single(raw, 'type')),
    origin: nonEmpty(single(raw, 'origin')),
    tags: parseTagParam(raw['tag']),
    q: parseQ(q),
    sinceMs: since === null || since.trim() === '' ? null : parseSince(since.trim(), nowMs),
    includeExpired: includeExpired === '1' || includeExpired === 'true',
    refId: ref === null ? null : parseSignalRef(ref, authority),
  }
}

function single(raw: Raw, name: string): string | null {
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

/**
 * @NOTE `cursor=` (empty) is refused, never read as "no cursor": a script whose cursor variable
 * came back empty after a failed request would otherwise silently restart at the newest page and
 * skip (or replay) signals. Leaving the parameter out is how to ask for the newest page.
 */
function parseCursor(raw: Raw): number | null {
  if (single(raw, 'cursor')?.trim() === '')
    throw invalid('cursor is empty: send the nextCursor of your previous answer, or leave cursor out for the newest page')
  return optionalInt(raw, 'cursor', 0)
}

function optionalInt(raw: Raw, name: string, min: number): number | null {
  const v = single(raw, name)
  if (v === null || v === '') return null
  if (!/^-?\d{1,16}$/.test(v) || !Number.isSafeInteger(Number(v))) throw invalid(`${name} must be an integer`)
  const n = Number(v)
  if (n < min) throw invalid(`${name} must be at least ${min}`)
  return n
}

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

/** The text `q` searches, the same in SQL (`searchTextSql`) and here: fields joined by U+0001. */
export const searchText = (s: Signal) =>
  [s.type, s.tags.join(' '), s.origin, s.originName ?? '', s.payloadText].join('\u0001').toLowerCase()

/**
 * The in-memory twin of the SQL filter (db/signals/read.ts). A signal past expiry + `graceMs` counts
 * as swept even before the sweeper deletes it, so `includeExpired` never shows what by-id reads hide.
 * `search`: the signal's searchText, when the caller keeps it (the tail does), so `q` never redoes it.
 */
export function matchesFilter(s: Signal, f: ReadFilter, nowMs: number, graceMs = Infinity, search?: string): boolean {
  if (!f.includeExpired && !isActive(s, nowMs)) return false
  if (!isActive(s, nowMs - graceMs)) return false
  if (f.type !== null && s.type !== f.type) return false
  if (f.origin !== null && s.origin !== f.origin) return false
  if (f.tags.length && !f.tags.some((t) => s.tags.includes(t))) return false
  if (f.sinceMs !== null && !(s.createdAtMs > f.sinceMs)) return false
  if (f.refId !== null && s.refId !== f.refId) return false
  if (f.q !== null && !(search ?? searchText(s)).includes(f.q)) return false
  return true
}
