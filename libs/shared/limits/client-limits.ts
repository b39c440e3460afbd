import type { Redis } from 'ioredis'
import { LRUCache } from 'lru-cache'
import { metrics } from '../metrics/index.js'
import { addressKey } from './address.js'
import { limited } from './budget.js'
import type { BudgetWaiter } from './budget-waiter.js'
import { SlotLimiter } from './slot-batch.js'
import { WindowLimiter } from './window-batch.js'

/** Config `clientLimits`: every max is per window; 0 turns that limit off. */
export interface ClientLimitSettings {
  /** Requests (reads, and any other request without a door of its own) per client address per readWindowMs. */
  readMax: number
  readWindowMs: number
  /** Long-polls one client address may hold open at once. */
  longPollsMax: number
  /** Publishes per client address per publishWindowMs, whatever the identities. */
  publishMax: number
  publishWindowMs: number
  /** Publish attempts (anything sent to a publish door, refused or not) per client address per publishWindowMs. */
  attemptMax: number
  /** Failed admin authentications per client address per ADMIN_FAILURE_WINDOW_MS; past it the address is refused for the window. */
  adminFailureMax: number
  /** New identities (register_identity) per client address per hour. */
  registerMax: number
  /** Local mode: publishes per minute, board-wide, by identities that never published here before. */
  newIdentityMax: number
  /** IPv6 addresses count by their first this many bits (IPv4 exactly). */
  ipv6PrefixBits: number
  /**
   * Addresses whose request budget this process keeps in hand at once (leases of points reserved in
   * Redis). Above the followers one process serves at once (its connections), so that followers
   * polling in turn do not push each other's leases out and go to Redis on every poll.
   */
  readLeasesMax: number
}

/**
 * A long-poll's slot lives at most this long: a process that dies holding slots frees them within
 * it. @NOTE slots are counted in fixed windows of this length, so across a window's turn an
 * address may briefly hold up to twice its limit; the bound stays finite.
 */
const POLL_SLOT_SECONDS = 60
const ADMIN_FAILURE_WINDOW_MS = 15 * 60_000
/** Addresses this process has seen go over their admin-failure budget, until their window ends. */
const BLOCKED_MAX = 10_000

const seconds = (ms: number) => Math.round(ms / 1000)

/**
 * Every per-client-address budget (and the board-wide budget for new identities), shared by every
 * process on the same Redis and key prefix. Each method takes the raw client address (req.ip after
 * TRUST_PROXY) and keys it by addressKey, so an IPv6 /64 is one client. Over budget: WireError
 * `rate_limited` with its Retry-After. Without Redis, or while it is down, each process counts on
 * its own (fail to local, not open). The Redis connection pipelines every command of one
 * event-loop turn into one write, so all these budgets together cost one round trip per turn.
 */
export function clientLimits(o: ClientLimitSettings & { keyPrefix: string }, redis?: Redis) {
  const key = (address: string) => addressKey(address, o.ipv6PrefixBits)
  const make = (name: string, points: number, windowMs: number, what: string, reason: string, maxLeases?: number): WindowLimiter | null =>
    points <= 0
      ? null
      : new WindowLimiter(
          {
            keyPrefix: `${o.keyPrefix}:${name}`,
            points,
            duration: Math.max(1, seconds(windowMs)),
            what,
            reason,
            ...(maxLeases && { maxLeases }),
          },
          redis,
        )
  const per = (ms: number) => `per ${seconds(ms)} s from one address`
  // every poll of every follower spends a request: the one budget whose leases must cover them all
  const reads = make('read', o.readMax, o.readWindowMs, `${o.readMax} requests ${per(o.readWindowMs)}`, 'reads', o.readLeasesMax)
  const polls =
    o.longPollsMax <= 0
      ? null
      : new SlotLimiter(
          {
            keyPrefix: `${o.keyPrefix}:poll`,
            points: o.longPollsMax,
            duration: POLL_SLOT_SECONDS,
            what: `${o.longPollsMax} waiting long-polls from one address`,
            reason: 'long_polls',
          },
          redis,
        )
  const publishes = make('pubaddr', o.publishMax, o.publishWindowMs, `${o.publishMax} publishes ${per(o.publishWindowMs)}`, 'publishes')
  const attempts = make(
    'attempt',
    o.attemptMax,
    o.publishWindowMs,
    `${o.attemptMax} publish attempts ${per(o.publishWindowMs)}`,
    'publish_attempts',
  )
  const adminFailures = make('adminfail', o.adminFailureMax, ADMIN_FAILURE_WINDOW_MS, '', '')
  const registers = make('register', o.registerMax, 3_600_000, `${o.registerMax} new identities per hour from one address`, 'registrations')
  const newIdentities = make(
    'newid',
    o.newIdentityMax,
    60_000,
    `${o.newIdentityMax} publishes per minute by new identities on this board`,
    'new_identities',
  )
  const blocked = new LRUCache<string, true>({ max: BLOCKED_MAX, ttl: ADMIN_FAILURE_WINDOW_MS })
  const take = async (limiter: WindowLimiter | null, k: string) => void (limiter && (await limiter.consume(k)))
  const adminRefusal = () =>
    limited(
      o.adminFailureMax,
      `${o.adminFailureMax} failed admin authentications per ${seconds(ADMIN_FAILURE_WINDOW_MS) / 60} min from one address`,
      null,
      ADMIN_FAILURE_WINDOW_MS,
    )

  return {
    readsLimited: reads !== null,
    pollsLimited: polls !== null,
    newIdentitiesLimited: newIdentities !== null,
    /** The budget key of an address (for presence and logs that must agree with the budgets). */
    key,
    /** One request (a read, or any request without a door of its own). */
    read: (address: string) => take(reads, key(address)),
    /** Takes a long-poll slot for the address; resolves to its release (call once, when the poll ends). */
    async openPoll(address: string): Promise<() => void> {
      if (!polls) return () => {}
      const k = key(address)
      await polls.take(k)
      let released = false
      return () => {
        if (released) return
        released = true
        polls.give(k) // a lost give-back only holds the slot until the window ends
      }
    },
    /**
     * `read` and `openPoll` for a waiter that is its own callback, with no promise or closure (the
     * read door's admissions, which 10,000 followers connecting at once hold across a Redis round
     * trip): `w.resolve()` when granted, maybe at once; `w.reject(err)` with the budget's refusal
     * (the client's WireError) or the failure. Both take the budget key
     * (`key(address)`); a slot taken with `takePoll` is given back with `givePoll`, once.
     */
    takeRead(k: string, w: BudgetWaiter): void {
      if (reads) reads.consumeTo(k, w)
      else w.resolve()
    },
    takePoll(k: string, w: BudgetWaiter): void {
      if (polls) polls.takeTo(k, w)
      else w.resolve()
    },
    givePoll(k: string): void {
      polls?.give(k) // a lost give-back only holds the slot until the window ends
    },
    // the publish path's budgets make no promise when they are off (every publish passes both)
    /** Anything sent to a publish door, before any work on it: refused, replayed or stored alike. */
    attempt: (address: string): Promise<unknown> | undefined => attempts?.consume(key(address)),
    /** A publish about to be stored. */
    publish: (address: string): Promise<unknown> | undefined => publishes?.consume(key(address)),
    /** After a wrong admin token: counts it; past the budget the address's further failures are refused (429) until the window ends. */
    async adminFailed(address: string): Promise<void> {
      const k = key(address)
      if (blocked.has(k)) {
        metrics.refused.inc({ reason: 'admin_failures' })
        throw adminRefusal()
      }
      try {
        await take(adminFailures, k)
      } catch {
        metrics.refused.inc({ reason: 'admin_failures' })
        blocked.set(k, true)
        throw adminRefusal()
      }
    },
    register: (address: string) => take(registers, key(address)),
    newIdentity: () => take(newIdentities, 'board'),
  }
}
export type ClientLimits = ReturnType<typeof clientLimits>
