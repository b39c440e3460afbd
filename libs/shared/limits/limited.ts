import type { RateLimiterRes } from './rate-limiter.js'
import { WireError } from '../domain/index.js'

/** The one refusal every budget gives: 429 `rate_limited`, its limit and when it resets, and Retry-After. */
export function limited(limit: number, what: string, res: RateLimiterRes | null, resetMs = res?.msBeforeNext ?? 1000): WireError {
  return new WireError(
    'rate_limited',
    `rate limit reached: ${what}`,
    { limit, remaining: Math.max(0, res?.remainingPoints ?? 0), resetMs },
    { retryAfter: resetMs / 1000 },
  )
}
