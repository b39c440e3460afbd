import { LRUCache } from 'lru-cache'
import type { Origins } from '../db/index.js'
import type { ClientLimits } from '../limits/index.js'

/** Identities this process knows have published: no query for them. Bounded; a forgotten one costs one index probe. */
const KNOWN_MAX = 100_000

/**
 * Local mode's budget for identities new to the board: a fresh token is a fresh identity and
 * costs nothing to make, so publishes by identities with no signal here yet share one board-wide
 * budget (NEW_IDENTITY_RATE_LIMIT_MAX per minute). Identities that have published pass freely.
 */
export function newIdentityGate(origins: Origins, limits: Pick<ClientLimits, 'newIdentity' | 'newIdentitiesLimited'>) {
  const known = new LRUCache<string, true>({ max: KNOWN_MAX })
  return {
    /** Nothing to wait for (no promise) when the budget is off or the identity is known. */
    check(identityId: string): Promise<void> | undefined {
      if (!limits.newIdentitiesLimited || known.has(identityId)) return undefined
      return origins.hasPublished(identityId).then(async (published) => {
        if (published) return void known.set(identityId, true)
        await limits.newIdentity()
      })
    },
    /** After a commit: the identity is known from now on. */
    published(identityId: string) {
      if (limits.newIdentitiesLimited) known.set(identityId, true)
    },
  }
}
export type NewIdentityGate = ReturnType<typeof newIdentityGate>
