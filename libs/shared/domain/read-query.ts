import { invalid } from './errors.js'
import { LIMITS } from './limits.js'
import { parseFilter, single, type Raw, type ReadFilter } from './read-filters.js'

export {
  filterKey,
  matchesFilter,
  parseSince,
  PAGE_SOURCE_NAMES,
  READ_FILTERS,
  searchText,
  servedBy,
  unfiltered,
  type FilterKey,
  type FilterKind,
  type PageSourceName,
  type ReadFilter,
} from './read-filters.js'

export interface ReadQuery extends ReadFilter {
  cursor: number | null
  limit: number
  waitMs: number
}

/**
 * Query string → ReadQuery (docs/protocol.md "Reading"): the paging parameters here, the filters
 * from the table in read-filters.ts. Garbage → invalid_request, never a throw of another kind.
 * `authority` is this board's: a `ref` given as an sw:// URI must name it.
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
  return {
    cursor,
    limit: limit === null ? LIMITS.maxLimit : Math.min(LIMITS.maxLimit, Math.max(1, limit)),
    waitMs: Math.round(waitSeconds * 1000),
    ...parseFilter(raw, { nowMs, authority }),
  }
}

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
