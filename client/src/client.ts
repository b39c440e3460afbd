import type {
  BoardMetadata,
  BoardPatch,
  DiscoveryDocument,
  EmittedSignal,
  PublishResult,
  PublishRule,
  ReadParams,
  RuleType,
  SignalDraft,
  SignalPage,
  SignalThread,
  SignalWithReplies,
} from '../../libs/shared/domain/wire-types.js'
import { Follower, type FollowOptions, type FollowQuery } from './follow.js'
import { call, toQuery, type CallOptions, type FetchLike } from './http.js'
import { newIdempotencyKey, PUBLISH_RETRY_DEFAULTS, publishRetryDelay, type PublishRetryOptions } from './publish-retry.js'
import { ReplyWaiter, type RequestOptions } from './request.js'
import { sleep } from './timing.js'

export interface WireClientOptions {
  /** The board's base URL (`https://board.example`), or several: a follower moves to the next when one fails. */
  url: string | string[]
  /** Where reads and follows go, when not `url` (a reader fleet behind other addresses). */
  readUrl?: string | string[]
  /** The bearer token: required to publish; on reads it counts you as a present reader. */
  token?: string
  /** The board's admin token, for `admin.*`. */
  adminToken?: string
  /** A fetch to use instead of the global one. */
  fetch?: FetchLike
  /** Per-request deadline for everything but long-polls, ms (default 30 000). */
  timeoutMs?: number
  /**
   * How `publish` (and `request`) try again after a 503 or 429 with Retry-After (default: 4 tries
   * within 30 s), or false: never, and no Idempotency-Key of the client's own.
   */
  publishRetry?: PublishRetryOptions | false
  /** Most bytes of any one answer to read, counted as decoded; past it the call fails with `payload_too_large` (default: no cap). */
  maxBytes?: number
  /** How a feed page's bytes become a page (default: `JSON.parse` of its text): a reader that indexes pages may parse their signals one at a time. */
  parsePage?: (body: Uint8Array) => SignalPage
}

const list = (u: string | string[]) => (Array.isArray(u) ? u : [u]).map((s) => s.replace(/\/+$/, ''))
const seg = (id: string) => encodeURIComponent(id.trim())

/** A Wire board: one-shot calls, admin calls, `follow` and `request`. */
export class WireClient {
  readonly urls: string[]
  readonly readUrls: string[]
  readonly admin: WireAdmin
  readonly #o: WireClientOptions
  readonly #fetch: FetchLike

  constructor(o: WireClientOptions) {
    this.urls = list(o.url)
    this.readUrls = list(o.readUrl ?? o.url)
    if (this.urls.length === 0 || this.readUrls.length === 0) throw new TypeError('WireClient needs at least one url')
    this.#o = o
    this.#fetch = o.fetch ?? ((input, init) => fetch(input, init))
    this.admin = new WireAdmin((path, co) => this.#call(this.urls[0]!, path, { ...co, token: o.adminToken }))
  }

  #call<T>(base: string, path: string, co: CallOptions = {}): Promise<T> {
    return call<T>(this.#fetch, base, path, {
      timeoutMs: this.#o.timeoutMs ?? 30_000,
      token: this.#o.token,
      ...(this.#o.maxBytes !== undefined && { maxBytes: this.#o.maxBytes }),
      ...co,
    })
  }

  /** @internal the follower's way in: one GET of the feed against a chosen reader. */
  readPage(base: string, params: ReadParams, signal: AbortSignal | undefined, timeoutMs: number): Promise<SignalPage> {
    const parse = this.#o.parsePage
    return this.#call<SignalPage>(base, '/sw/signals', { query: toQuery(params), signal, timeoutMs, ...(parse && { parse }) })
  }

  /**
   * Publishes a signal. A 503 or 429 with Retry-After is tried again after that long, within
   * `publishRetry`'s bounds, every try with the same Idempotency-Key: `idempotencyKey`, or one of the
   * client's own, so the board accepts the signal once however many tries reach it.
   */
  async publish(draft: SignalDraft, o: { idempotencyKey?: string; signal?: AbortSignal } = {}): Promise<PublishResult> {
    const retry = this.#o.publishRetry === false ? null : { ...PUBLISH_RETRY_DEFAULTS, ...this.#o.publishRetry }
    const key = o.idempotencyKey ?? (retry ? newIdempotencyKey() : undefined)
    const headers: Record<string, string> = key ? { 'idempotency-key': key } : {}
    const startedAt = Date.now()
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.#call<PublishResult>(this.urls[0]!, '/sw/signals', { method: 'POST', body: draft, headers, signal: o.signal })
      } catch (err) {
        const wait = retry ? publishRetryDelay(err, attempt, retry, startedAt) : undefined
        if (wait === undefined) throw err
        if (!(await sleep(wait, o.signal))) throw o.signal?.reason ?? err
      }
    }
  }

  /** One signal (raw id or `sw://` URI) and its direct replies. */
  get(id: string, o: { signal?: AbortSignal } = {}): Promise<SignalWithReplies> {
    return this.#call(this.readUrls[0]!, `/sw/signals/${seg(id)}`, { signal: o.signal })
  }

  /** The root and every descendant, oldest first. */
  thread(id: string, o: { signal?: AbortSignal } = {}): Promise<SignalThread> {
    return this.#call(this.readUrls[0]!, `/sw/signals/${seg(id)}/thread`, { signal: o.signal })
  }

  /** One page of the feed (no retries; use `follow` to keep up with a board). */
  read(params: ReadParams = {}, o: { signal?: AbortSignal } = {}): Promise<SignalPage> {
    const timeoutMs = (this.#o.timeoutMs ?? 30_000) + (params.wait ?? 0) * 1000
    return this.readPage(this.readUrls[0]!, params, o.signal, timeoutMs)
  }

  /** Board metadata and live counts (`GET /sw/wire`). */
  board(o: { signal?: AbortSignal } = {}): Promise<BoardMetadata> {
    return this.#call(this.readUrls[0]!, '/sw/wire', { signal: o.signal })
  }

  /** The discovery document (`/.well-known/wire`). */
  discover(o: { signal?: AbortSignal } = {}): Promise<DiscoveryDocument> {
    return this.#call(this.readUrls[0]!, '/.well-known/wire', { signal: o.signal })
  }

  /**
   * Follows the feed: every matching signal once, oldest first, live. Without `cursor` it starts
   * with the newest page, or after it with `from: 'head'`. Iterate with `for await`; `follower.cursor` is where to resume.
   */
  follow(query: FollowQuery = {}, o: FollowOptions = {}): Follower {
    return new Follower(this, query, o)
  }

  /** Publishes `draft` and follows its direct replies until `timeout` ms pass or `signal` aborts. */
  async request(draft: SignalDraft, o: RequestOptions): Promise<ReplyWaiter> {
    const published = await this.publish(draft, o.idempotencyKey ? { idempotencyKey: o.idempotencyKey } : {})
    return new ReplyWaiter(this, published, o)
  }
}

type AdminCall = <T>(path: string, co?: CallOptions) => Promise<T>

/** The admin API (`Authorization: Bearer <SERVER_ADMIN_TOKEN>`). */
export class WireAdmin {
  readonly #call: AdminCall
  constructor(c: AdminCall) {
    this.#call = c
  }
  metadata(): Promise<BoardMetadata> {
    return this.#call('/sw/admin/wire')
  }
  patchMetadata(patch: BoardPatch): Promise<BoardMetadata> {
    return this.#call('/sw/admin/wire', { method: 'PATCH', body: patch })
  }
  async rules(): Promise<PublishRule[]> {
    return (await this.#call<{ rules: PublishRule[] }>('/sw/admin/rules')).rules
  }
  async addRule(ruleType: RuleType, identityId: string): Promise<PublishRule> {
    return (await this.#call<{ rule: PublishRule }>('/sw/admin/rules', { method: 'POST', body: { ruleType, identityId } })).rule
  }
  async removeRule(id: string): Promise<void> {
    await this.#call(`/sw/admin/rules/${seg(id)}`, { method: 'DELETE' })
  }
  async pin(id: string): Promise<EmittedSignal> {
    return (await this.#call<{ signal: EmittedSignal }>(`/sw/admin/signals/${seg(id)}/pin`, { method: 'POST' })).signal
  }
  async unpin(id: string): Promise<EmittedSignal> {
    return (await this.#call<{ signal: EmittedSignal }>(`/sw/admin/signals/${seg(id)}/pin`, { method: 'DELETE' })).signal
  }
  async remove(id: string): Promise<void> {
    await this.#call(`/sw/admin/signals/${seg(id)}`, { method: 'DELETE' })
  }
}
