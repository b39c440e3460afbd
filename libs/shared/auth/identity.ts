import { hash, randomBytes } from 'node:crypto'
import { LRUCache } from 'lru-cache'
import { LIMITS, WireError, identityUri } from '../domain/index.js'
import { bearerToken } from './bearer.js'
import { fingerprint } from './fingerprint.js'

/** Who published: the fields a signal carries about its origin, plus standing. */
export interface Identity {
  id: string
  name: string | null
  uri: string
  verified: boolean
  /** Network mode only: the identity's bits (standing). Null in local mode. */
  bits: number | null
}

export interface IdentityResolver {
  readonly mode: 'local' | 'network'
  /** Publish path: missing or bad token → unauthorized; dependency down → unavailable. */
  authenticate(authorization: string | string[] | undefined): Promise<Identity>
  /**
   * Read path (recentPollers): who the caller is, or null without a usable token. Local mode: the
   * fingerprint. Network mode: the cached identity's id, else a hash of the token while a background
   * verify runs. Never throws, never waits on a network.
   */
  peek(authorization: string | string[] | undefined): string | null
  /** Onboarding (MCP register_identity): a new token and the identity it maps to. */
  register(): Promise<{ token: string; identityId: string; identityUri: string }>
}

export interface LocalIdentityOptions {
  authority: string
  fingerprintKey: string
  verifiedByDefault: boolean
  /** With LOCAL_IDENTITY_VERIFIED=0, identities holding an allow rule count as verified. */
  isAllowListed: (identityId: string) => Promise<boolean>
}

/** Identities of recent tokens, keyed by the token's SHA-256 (a tenth of the HMAC's cost); bounded. */
const RECENT_TOKENS = 10_000

/** A local identity's id and URI, made once per token while it is recent: every signal of it shares them. */
interface Known {
  id: string
  uri: string
}

/** Local mode: the token is the identity, through a keyed fingerprint. Tokens are never stored. */
export function localIdentity(o: LocalIdentityOptions): IdentityResolver {
  const recent = new LRUCache<string, Known>({ max: RECENT_TOKENS })
  const knownOf = (token: string): Known => {
    const key = hash('sha256', token, 'base64url')
    let known = recent.get(key)
    if (known === undefined) {
      const id = fingerprint(o.fingerprintKey, token)
      recent.set(key, (known = { id, uri: identityUri(o.authority, id) }))
    }
    return known
  }
  const knownBy = (authorization: string | string[] | undefined): Known => {
    const token = bearerToken(authorization)
    if (token === null) throw new WireError('unauthorized', 'publishing needs Authorization: Bearer <token>')
    if (token.length < LIMITS.minLocalTokenLength)
      throw new WireError('unauthorized', `bearer token must be at least ${LIMITS.minLocalTokenLength} characters`)
    return knownOf(token)
  }
  return {
    mode: 'local',
    async authenticate(authorization) {
      const { id, uri } = knownBy(authorization)
      const verified = o.verifiedByDefault || (await o.isAllowListed(id))
      return { id, name: null, uri, verified, bits: null }
    },
    async register() {
      // local mode: any token is an identity; a fresh random one is a fresh identity (nothing is stored)
      const token = `wire_${randomBytes(24).toString('base64url')}`
      const identityId = fingerprint(o.fingerprintKey, token)
      return { token, identityId, identityUri: identityUri(o.authority, identityId) }
    },
    peek(authorization) {
      try {
        return authorization === undefined ? null : knownBy(authorization).id
      } catch {
        return null
      }
    },
  }
}
