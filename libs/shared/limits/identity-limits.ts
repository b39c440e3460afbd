import type { Redis } from 'ioredis'
import { WindowLimiter } from './window-batch.js'

export interface RateLimitOptions {
  publishMax: number
  publishWindowMs: number
  unverifiedMax: number
  unverifiedWindowMs: number
  /** Redis key prefix; limits are shared by every writer that uses the same Redis and prefix. */
  keyPrefix: string
}

/**
 * Per-identity publish limits (docs/protocol.md "Rate limit"), shared by all writers through Redis.
 * While Redis is down each writer falls back to its own in-memory limiter (fail to local, not open).
 * A writer's publishes of one turn of the event loop are counted in one Redis call (WindowLimiter).
 */
export function publishRateLimits(o: RateLimitOptions, redis?: Redis) {
  const make = (name: string, points: number, windowMs: number) => {
    const duration = Math.max(1, Math.round(windowMs / 1000))
    return new WindowLimiter(
      { keyPrefix: `${o.keyPrefix}:${name}`, points, duration, what: `${points} publishes per ${duration} s` },
      redis,
    )
  }
  // PUBLISH_RATE_LIMIT_MAX=0 means no limit for verified identities, as in the reference server
  const verified = o.publishMax > 0 ? make('pub', o.publishMax, o.publishWindowMs) : null
  const unverified = make('unv', o.unverifiedMax, o.unverifiedWindowMs)

  return {
    /** Takes one publish from the identity's allowance: rejects with 429 rate_limited (Retry-After) past it; no promise when no limit applies. */
    consume(identityId: string, isVerified: boolean): Promise<unknown> | undefined {
      return (isVerified ? verified : unverified)?.consume(identityId)
    },
  }
}
export type PublishRateLimits = ReturnType<typeof publishRateLimits>
