import type { Redis } from 'ioredis'
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible'
import { WireError } from '../domain/index.js'

export interface RateLimitOptions {
  publishMax: number
  publishWindowMs: number
  unverifiedMax: number
  unverifiedWindowMs: number
  /** Redis key prefix; limits are shared by every writer that uses the same Redis and prefix. */
  keyPrefix: string
}

/**
 * Per-identity publish limits (decisions.md "Rate limit"), shared by all writers through Redis.
 * While Redis is down each writer falls back to its own in-memory limiter (fail to local, not open).
 */
export function publishRateLimits(o: RateLimitOptions, redis?: Redis) {
  const make = (name: string, points: number, windowMs: number): RateLimiterAbstract => {
    const duration = Math.max(1, Math.round(windowMs / 1000))
    const memory = new RateLimiterMemory({ keyPrefix: `${o.keyPrefix}:${name}`, points, duration })
    return redis
      ? new RateLimiterRedis({ storeClient: redis, keyPrefix: `${o.keyPrefix}:${name}`, points, duration, insuranceLimiter: memory, rejectIfRedisNotReady: true })
      : memory
  }
  const verified = make('pub', o.publishMax, o.publishWindowMs)
  const unverified = make('unv', o.unverifiedMax, o.unverifiedWindowMs)

  return {
    /** Takes one publish from the identity's allowance or throws 429 rate_limited with Retry-After. */
    async consume(identityId: string, isVerified: boolean): Promise<void> {
      const limiter = isVerified ? verified : unverified
      try {
        await limiter.consume(identityId)
      } catch (res) {
        if (!(res instanceof RateLimiterRes)) throw res
        const limit = limiter.points
        throw new WireError(
          'rate_limited',
          `rate limit reached: ${limit} publishes per ${limiter.duration} s`,
          { limit, remaining: Math.max(0, res.remainingPoints), resetMs: res.msBeforeNext },
          { retryAfter: res.msBeforeNext / 1000 },
        )
      }
    },
  }
}
export type PublishRateLimits = ReturnType<typeof publishRateLimits>
