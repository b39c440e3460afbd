import type { EmittedSignal, ReadParams, SignalPage } from '../../libs/shared/domain/wire-types.js'
import { WireError } from './errors.js'
import { SeenIds } from './seen-ids.js'
import { backoffDelay, sleep, type BackoffOptions } from './timing.js'

/** What to follow: every read filter; the follower owns `cursor` and `wait`. */
export type FollowQuery = Omit<ReadParams, 'cursor' | 'wait'>

export interface FollowOptions {
  /** Resume after this feed position (a `cursor` you kept). Unset: start where `from` says. */
  cursor?: number
  /**
   * Where to start when there is no `cursor`: `'newest-page'` (default) hands out the newest page
   * first; `'head'` starts after it, with only what is published from now on (an agent that answers
   * requests and must not answer old ones). `onCursor` is called with the head once it is known.
   */
  from?: 'newest-page' | 'head'
  /** Stops the follower: the iteration ends quietly, an open long-poll is cancelled. */
  signal?: AbortSignal
  /** Called with the new cursor after every page, once every signal of that page has been handed to you. */
  onCursor?: (cursor: number) => void | Promise<void>
  /** Called before each wait after a failure (for logs). */
  onRetry?: (info: { error: WireError; delayMs: number; url: string }) => void
  /** Long-poll seconds, 1..25 (default 25). */
  wait?: number
  /** Signal ids remembered to drop repeats (default 10 000). */
  dedupeWindow?: number
  /** Exponential backoff after network errors and 5xx without `Retry-After`. */
  backoff?: BackoffOptions
  /** Least time between two polls that brought nothing, ms (default 1000): a server that answers at once is not hammered. */
  minIntervalMs?: number
}

const MAX_RETRY_AFTER_MS = 15 * 60_000

/** What a follower reads through (WireClient): the readers to try, and one page from one of them. */
export interface PageSource {
  readonly readUrls: string[]
  readPage(base: string, params: ReadParams, signal: AbortSignal | undefined, timeoutMs: number): Promise<SignalPage>
}

/**
 * A live follower of one feed query. Iterate it once with `for await`; `cursor` is the position to
 * resume from after the signals handed out so far.
 */
export class Follower implements AsyncIterable<EmittedSignal> {
  cursor: number | undefined
  /** The reader the next poll goes to. */
  url: string
  readonly #client: PageSource
  readonly #query: FollowQuery
  readonly #o: FollowOptions
  #started = false

  constructor(client: PageSource, query: FollowQuery, o: FollowOptions) {
    this.#client = client
    this.#query = query
    this.#o = o
    this.cursor = o.cursor
    this.url = client.readUrls[0]!
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<EmittedSignal, void, undefined> {
    if (this.#started) throw new TypeError('a Follower is iterated once; call follow() again')
    this.#started = true
    const { signal, onCursor, onRetry } = this.#o
    const urls = this.#client.readUrls
    const wait = Math.min(25, Math.max(1, this.#o.wait ?? 25))
    const minInterval = this.#o.minIntervalMs ?? 1000
    const seen = new SeenIds(this.#o.dedupeWindow ?? 10_000)
    let reader = 0
    let failures = 0
    while (!signal?.aborted) {
      this.url = urls[reader % urls.length]!
      const cursor = this.cursor
      const headOnly = cursor === undefined && this.#o.from === 'head'
      // the head is the nextCursor of a newest-page read; one signal is the cheapest such page
      const params = cursor === undefined ? { ...this.#query, ...(headOnly && { limit: 1 }) } : { ...this.#query, cursor, wait }
      const started = Date.now()
      let page: SignalPage
      try {
        page = await this.#client.readPage(this.url, params, signal, (wait + 15) * 1000)
      } catch (err) {
        if (signal?.aborted) return
        if (!(err instanceof WireError) || !err.retryable) throw err
        const delayMs = retryDelay(err, failures++, this.#o.backoff)
        if (err.status !== 429) reader++ // another reader may answer; a rate limit is the same everywhere
        onRetry?.({ error: err, delayMs, url: this.url })
        if (!(await sleep(delayMs, signal))) return
        continue
      }
      failures = 0
      const serverNow = Date.parse(page.serverNow)
      const skew = Number.isFinite(serverNow) ? serverNow - Date.now() : 0
      let fresh = 0
      for (const s of headOnly ? [] : page.signals) {
        if (!seen.add(s.id)) continue
        // the server drops expired signals too; this catches one that expired in flight, by the server's clock
        if (!this.#query.includeExpired && !s.pinned && Date.parse(s.expiresAt) <= Date.now() + skew) continue
        fresh++
        yield s
      }
      if (typeof page.nextCursor !== 'number') throw new WireError('internal', 200, `${this.url}: a page without nextCursor`)
      this.cursor = page.nextCursor
      await onCursor?.(page.nextCursor)
      const idle = fresh === 0 && page.nextCursor === cursor
      const elapsed = Date.now() - started
      if (idle && elapsed < minInterval && !(await sleep(minInterval - elapsed, signal))) return
    }
  }
}

/** `Retry-After` as told (plus up to 10 % jitter, capped), else exponential backoff with jitter. */
export function retryDelay(err: WireError, attempt: number, backoff?: BackoffOptions, random = Math.random): number {
  if (err.retryAfter !== undefined && (err.status === 429 || err.status === 503)) {
    const told = Math.min(MAX_RETRY_AFTER_MS, err.retryAfter * 1000)
    return Math.round(Math.max(told, 100) + random() * Math.min(1000, told / 10))
  }
  return backoffDelay(attempt, backoff, random)
}
