import type { Redis } from 'ioredis'
import type { Config } from '../../libs/shared/config/index.js'
import { WireError } from '../../libs/shared/domain/index.js'
import { addressKey, WindowLimiter, type ClientLimits } from '../../libs/shared/limits/index.js'

/**
 * Every door's budgets, from libs/shared/limits: the root's per-address budgets (clientLimits:
 * each request's read budget, and REGISTER_RATE_LIMIT_MAX registrations per address per hour),
 * plus the network's own, shared through Redis like the board's:
 * - verifies per address (a board's writers verify for all their publishers: a door of its own);
 * - calls per identity on every token door (verify, derive, balance, transfer, card);
 * - the instant tier's hourly valve, network-wide (0 closes the tier).
 */
export function identityBudgets(cfg: Config, limits: ClientLimits, keyPrefix: string, redis: Redis | undefined) {
  const n = cfg.identityNetwork
  // each refuses with 429 rate_limited, its limit, Retry-After, and a count in wire_refused_total{reason}
  const window = (name: string, points: number, seconds: number, what: string) =>
    points > 0
      ? new WindowLimiter({ keyPrefix: `${keyPrefix}:${name}`, points, duration: seconds, what, reason: `identity_${name}` }, redis)
      : null
  const verifies = window('verify', n.verifyMax, 60, `${n.verifyMax} verifies per minute from one address`)
  const calls = window('calls', n.callsMax, 60, `${n.callsMax} calls per minute by one identity`)
  const valve = window('valve', n.registerHourlyMax, 3600, `${n.registerHourlyMax} instant registrations per hour on this network`)
  const take = async (l: WindowLimiter | null, key: string) => void (await l?.consume(key))
  const addr = (address: string) => addressKey(address, cfg.clientLimits.ipv6PrefixBits)

  return {
    limits,
    /** One verify from this address (instead of its read budget). */
    verify: (address: string) => take(verifies, addr(address)),
    /** One call by this identity on a token door. */
    identity: (identityId: string) => take(calls, identityId),
    /** One instant registration: the address's hourly budget, then the network's hourly valve. */
    async register(address: string) {
      if (n.registerHourlyMax === 0) throw new WireError('forbidden', 'instant registration is closed on this identity network')
      await limits.register(address)
      await take(valve, 'all')
    },
  }
}
export type IdentityBudgets = ReturnType<typeof identityBudgets>
