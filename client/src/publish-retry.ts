import { WireError } from './errors.js'

/** How `publish` tries again after a 503 or 429 that carries Retry-After. */
export interface PublishRetryOptions {
  /** Tries in all, the first included (default 4). */
  maxAttempts?: number
  /** No wait may end more than this long after the first try began, ms (default 30 000). */
  maxTotalMs?: number
}

export const PUBLISH_RETRY_DEFAULTS: Required<PublishRetryOptions> = { maxAttempts: 4, maxTotalMs: 30_000 }

/**
 * The wait before try number `attempt + 1` of a publish that failed with `err`, or undefined: do
 * not try again. Only a 503 or 429 carrying Retry-After is tried again (the board said when), for
 * as long as it says plus up to 10 % (a crowd refused at once does not come back at once), while
 * tries remain and the wait ends within `maxTotalMs` of `startedAt`.
 */
export function publishRetryDelay(
  err: unknown,
  attempt: number,
  o: Required<PublishRetryOptions>,
  startedAt: number,
  now = Date.now(),
  random = Math.random,
): number | undefined {
  if (!(err instanceof WireError) || (err.status !== 503 && err.status !== 429) || err.retryAfter === undefined) return undefined
  if (attempt >= o.maxAttempts) return undefined
  const ms = Math.round(err.retryAfter * 1000 * (1 + random() * 0.1))
  return now + ms - startedAt > o.maxTotalMs ? undefined : ms
}

/**
 * A fresh Idempotency-Key: 32 random hex digits. The first try carries it too, so a try whose
 * answer said "outcome unknown" (503) is accepted once however many times it is sent.
 * (crypto.getRandomValues: Node 20 and every browser, secure context or not.)
 */
export function newIdempotencyKey(): string {
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(16))
  let hex = ''
  for (const b of bytes) hex += b.toString(16).padStart(2, '0')
  return hex
}
