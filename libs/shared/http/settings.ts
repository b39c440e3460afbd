/** Timeouts, caps and shedding per process (config `http`; docs/security.md). */
export interface HttpSettings {
  /** Headers and body must have arrived within this (a slow-loris body is cut with 408); not the answer's time. */
  requestTimeoutMs: number
  headersTimeoutMs: number
  /** A socket with no traffic either way for this long is closed; above the longest long-poll wait. */
  connectionTimeoutMs: number
  keepAliveTimeoutMs: number
  /** Open sockets per process; 0: no cap. Beyond it, new connections are closed at once. */
  maxConnections: number
  /**
   * Connections the kernel queues for this process to accept (listen's backlog; the kernel caps it
   * at net.core.somaxconn). A front that opens thousands of connections at once (10,000 followers
   * reconnecting through nginx) overflows node's default of 511, and its connects time out.
   */
  listenBacklog: number
  /** Shed (503 unavailable, Retry-After) while the mean event-loop delay exceeds this; 0: off. */
  shedEventLoopDelayMs: number
  /** Shed while the heap in use exceeds this fraction of V8's heap limit; 0: off. */
  shedHeapUsedRatio: number
  /** fastify's trustProxy: whose X-Forwarded-For sets req.ip. */
  trustProxy: boolean | number | string[]
  /** Serve the hottest GET routes in the fast path, below node's request objects (libs/shared/http/fast-path). */
  fastPath: boolean
  /** The board's RFC 9728 document, named in the `WWW-Authenticate` challenge of every 401. */
  resourceMetadataUrl?: string
}

export const DEFAULT_HTTP: HttpSettings = {
  requestTimeoutMs: 30_000,
  headersTimeoutMs: 10_000,
  connectionTimeoutMs: 60_000,
  keepAliveTimeoutMs: 72_000,
  maxConnections: 20_000,
  listenBacklog: 4096,
  shedEventLoopDelayMs: 1000,
  shedHeapUsedRatio: 0.9,
  trustProxy: false,
  fastPath: true,
}
