/**
 * Says when the caller has gone (its connection closed): an AbortSignal, or anything with the same
 * three members. Listeners are objects (`handleEvent`), so a waiting request needs no closure.
 */
export interface Gone {
  readonly aborted: boolean
  addEventListener(type: 'abort', listener: { handleEvent(): void }): void
  removeEventListener(type: 'abort', listener: { handleEvent(): void }): void
}

/**
 * Who is asking, once per request: every surface builds one (the fastify routes through
 * `callerOf`, the fast path, MCP, A2A, the aggregator's proxy and search) and every door takes it
 * (read, publish, register, admin). Doors spend the caller's budgets; nothing else does.
 */
export interface Caller {
  /** The client's address (req.ip after TRUST_PROXY): its budgets are spent here. */
  readonly address: string
  /** The request's Authorization header: who publishes, or names the poller in recentPollers; never logged. */
  readonly authorization: string | string[] | undefined
  /** Aborts when the client leaves: ends a long-poll's wait. */
  readonly gone?: Gone
  /** The Idempotency-Key header as sent (the publish door checks it after auth). */
  readonly idempotencyKey?: string | string[] | undefined
  /** The W3C `traceparent` the client sent: a publish's span continues its trace. */
  readonly traceparent?: string | string[] | undefined
  /**
   * True when this request's one unit of the request budget was spent already, at the HTTP door
   * (the request hook, for a route whose handler is not a door itself: /mcp, /a2a): a read door
   * behind it spends none, so a read costs one unit on every surface.
   */
  readonly paid?: boolean
}
