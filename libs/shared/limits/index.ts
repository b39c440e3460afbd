import type { Redis } from 'ioredis'
import { RateLimiterRes } from 'rate-limiter-flexible'
import { WireError } from '../domain/index.js'
import { metrics } from '../metrics/index.js'
import { SlotLimiter } from './slot-batch.js'
import { WindowLimiter } from './window-batch.js'

export { SlotLimiter, type SlotLimiterOptions } from './slot-batch.js'
export { WindowLimiter, type WindowLimiterOptions } from './window-batch.js'

/** Config `clientLimits`: every max is per window; 0 turns that limit off. */
export interface ClientLimitSettings {
  /** Reads (any GET but health) per client address per readWindowMs. */
  readMax: number
  readWindowMs: number
  /** Long-polls one client address may hold open at once. */
  longPollsMax: number
  /** Publishes per client address per publishWindowMs, whatever the identities. */
  publishMax: number
  publishWindowMs: number
  /** Local mode: publishes per minute, board-wide, by identities that never published here before. */
  newIdentityMax: number
}

/**
 * A long-poll's slot lives at most this long: a process that dies holding slots frees them within
 * it. @NOTE slots are counted in fixed windows of this length, so across a window's turn an
 * address may briefly hold up to twice its limit; the bound stays finite.
 */
const POLL_SLOT_SECONDS = 60

const limited = (limiter: { points: number }, what: string, res: RateLimiterRes) =>
  new WireError(
    'rate_limited',
    `rate limit reached: ${what}`,
    { limit: limiter.points, remaining: Math.max(0, res.remainingPoints), resetMs: res.msBeforeNext },
    { retryAfter: res.msBeforeNext / 1000 },
  )

/**
 * Per-client-address budgets (and the board-wide budget for new identities), shared by every
 * process on the same Redis and key prefix; without Redis, or while it is down, each process keeps
 * its own in memory (fail to local, not open).
 */
export function clientLimits(o: ClientLimitSettings & { keyPrefix: string }, redis?: Redis) {
  // budgets only ever consumed: one Redis call per turn of the event loop for all of them (WindowLimiter)
  const make = (name: string, points: number, windowMs: number): WindowLimiter | null =>
    points <= 0 ? null : new WindowLimiter({ keyPrefix: `${o.keyPrefix}:${name}`, points, duration: Math.max(1, Math.round(windowMs / 1000)) }, redis)
  // long-poll slots are taken and given back, a turn's worth per Redis call (SlotLimiter)
  const slots = (name: string, points: number, windowMs: number): SlotLimiter | null =>
    points <= 0 ? null : new SlotLimiter({ keyPrefix: `${o.keyPrefix}:${name}`, points, duration: Math.max(1, Math.round(windowMs / 1000)) }, redis)
  const reads = make('read', o.readMax, o.readWindowMs)
  const polls = slots('poll', o.longPollsMax, POLL_SLOT_SECONDS * 1000)
  const publishes = make('pubaddr', o.publishMax, o.publishWindowMs)
  const newIdentities = make('newid', o.newIdentityMax, 60_000)

  const take = async (limiter: Pick<WindowLimiter, 'consume' | 'points'> | null, key: string, what: string, reason: string) => {
    if (!limiter) return
    try {
      await limiter.consume(key)
    } catch (res) {
      if (!(res instanceof RateLimiterRes)) throw res
      metrics.refused.inc({ reason })
      throw limited(limiter, what, res)
    }
  }

  return {
    readsLimited: reads !== null,
    pollsLimited: polls !== null,
    newIdentitiesLimited: newIdentities !== null,
    read: (address: string) => take(reads, address, `${o.readMax} reads per ${Math.round(o.readWindowMs / 1000)} s from one address`, 'reads'),
    /** Takes a long-poll slot for the address; resolves to its release (call once, when the poll ends). */
    async openPoll(address: string): Promise<() => void> {
      if (!polls) return () => {}
      try {
        await polls.take(address)
      } catch (res) {
        if (!(res instanceof RateLimiterRes)) throw res
        metrics.refused.inc({ reason: 'long_polls' })
        throw limited(polls, `${o.longPollsMax} waiting long-polls from one address`, res)
      }
      let released = false
      return () => {
        if (released) return
        released = true
        polls.give(address) // a lost give-back only holds the slot until the window ends
      }
    },
    publish: (address: string) =>
      take(publishes, address, `${o.publishMax} publishes per ${Math.round(o.publishWindowMs / 1000)} s from one address`, 'publishes'),
    newIdentity: () => take(newIdentities, 'board', `${o.newIdentityMax} publishes per minute by new identities on this board`, 'new_identities'),
  }
}
export type ClientLimits = ReturnType<typeof clientLimits>
