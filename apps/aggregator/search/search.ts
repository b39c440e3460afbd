import { LIMITS, parseReadQuery, WireError } from '../../../libs/shared/domain/index.js'
import type { IndexStore, SearchPage, SearchQuery } from './index-store.js'

/** Parses the search's query string with the board's own read parser (same bounds), plus `board`. */
export function parseSearchQuery(raw: Record<string, unknown>, nowMs: number): SearchQuery & { waitMs: number } {
  const r = parseReadQuery({ ...raw, ref: undefined, includeExpired: undefined }, nowMs, 'aggregator')
  const board = raw.board
  if (board !== undefined && (typeof board !== 'string' || board.length > 255))
    throw new WireError('invalid_request', 'board must be given once')
  return {
    cursor: r.cursor,
    limit: r.limit,
    q: r.q,
    tags: r.tags,
    type: r.type,
    origin: r.origin,
    board: board?.trim().toLowerCase() || null,
    sinceMs: r.sinceMs,
    waitMs: r.waitMs,
  }
}

/**
 * Searches, and with `wait` holds the request until a matching signal is indexed or the wait ends.
 * Waiters are woken by this process's index writes and, for another process's, by a timer; their
 * number is bounded (past it a long-poll is refused with 503).
 */
export function searchSide(index: IndexStore, o: { maxWaiters: number; pollMs: number }) {
  const waiters = new Set<() => void>()
  const wakeAll = () => {
    for (const w of [...waiters]) w()
  }
  const timer = setInterval(wakeAll, o.pollMs)
  timer.unref()
  return {
    wake: wakeAll,
    get waiting() {
      return waiters.size
    },
    async search(q: SearchQuery & { waitMs: number }, left?: AbortSignal): Promise<SearchPage> {
      const until = Date.now() + Math.min(q.waitMs, LIMITS.maxWaitSeconds * 1000)
      let page = await index.search(q)
      if (q.cursor === null || q.waitMs <= 0 || page.signals.length > 0) return page
      if (o.maxWaiters > 0 && waiters.size >= o.maxWaiters)
        throw new WireError('unavailable', 'too many waiting searches on this process', undefined, { retryAfter: 1, overload: true })
      while (page.signals.length === 0 && Date.now() < until && !left?.aborted) {
        await new Promise<void>((resolve) => {
          const done = () => (waiters.delete(done), clearTimeout(t), left?.removeEventListener('abort', done), resolve())
          const t = setTimeout(done, until - Date.now())
          waiters.add(done)
          left?.addEventListener('abort', done)
        })
        page = await index.search({ ...q, cursor: q.cursor })
      }
      return page
    },
    close() {
      clearInterval(timer)
      wakeAll()
    },
  }
}
export type SearchSide = ReturnType<typeof searchSide>
