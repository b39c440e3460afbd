import { createHmac, createSecretKey, randomBytes, timingSafeEqual } from 'node:crypto'
import { WireError } from '../../libs/shared/domain/index.js'

/** Master tokens (an identity's), account credentials and derived tokens: told apart by prefix. */
export const MASTER_PREFIX = 'wim_'
export const ACCOUNT_PREFIX = 'wia_'
export const DERIVED_PREFIX = 'wid_'

/** Derived tokens live 60 s to 24 h. */
export const DERIVED_TTL_MIN = 60
export const DERIVED_TTL_MAX = 86_400

const AUTHORITY_MAX = 255
// one pass, no nested quantifiers: a host name or a bracketed IPv6 literal, then an optional port
const AUTHORITY = /^(?:\[[0-9a-f:.]{2,45}\]|[a-z0-9.-]{1,253})(?::(\d{1,5}))?$/

/**
 * An authority as a board names itself (PUBLIC_WIRE_HOST): host lower-cased, port kept (as a
 * number: `:080` is `:80`). Derived tokens are scoped by exact equality of this form. Null when it
 * is not an authority.
 */
export function canonicalAuthority(input: unknown): string | null {
  if (typeof input !== 'string' || input.length > AUTHORITY_MAX + 8) return null
  const a = input.trim().toLowerCase()
  const m = AUTHORITY.exec(a)
  if (!m) return null
  if (m[1] === undefined) return a
  const port = Number(m[1])
  if (port < 1 || port > 65_535) return null
  return `${a.slice(0, a.length - m[1].length)}${port}`
}

export interface DerivedClaims {
  identityId: string
  authority: string
  /** The master token's generation it was derived from. */
  generation: number
  /** Seconds since the epoch. */
  expiresAt: number
}

/**
 * The network's keys, all from one server key: one for token hashes (what is stored), one for
 * derived tokens' signatures. A token is never stored, compared or logged as itself.
 */
export function tokenKeys(serverKey: string) {
  // @NOTE KeyObjects made once: createHmac with a Buffer key makes one per call (a sixth of a verify's JavaScript time)
  const hashKey = createSecretKey(createHmac('sha256', serverKey).update('wire-identity:token-hash').digest())
  const signKey = createSecretKey(createHmac('sha256', serverKey).update('wire-identity:derived').digest())
  const sign = (payload: string) => createHmac('sha256', signKey).update(payload).digest()

  return {
    /** What is stored for a master token or account credential (a keyed hash: the token can't be found from it). */
    hash: (token: string): Buffer => createHmac('sha256', hashKey).update(token).digest(),
    /** Constant-time equality of two stored hashes. */
    same: (a: Buffer, b: Buffer): boolean => a.length === b.length && timingSafeEqual(a, b),
    mint: (prefix: string): string => prefix + randomBytes(32).toString('base64url'),
    derive(c: DerivedClaims): string {
      const payload = `${c.identityId}\n${c.authority}\n${c.generation}\n${c.expiresAt}`
      const body = Buffer.from(payload).toString('base64url')
      return `${DERIVED_PREFIX}${body}.${sign(payload).toString('base64url')}`
    },
    /** A derived token's claims when its signature holds (expiry and scope are the caller's checks); else null. */
    open(token: string): DerivedClaims | null {
      if (!token.startsWith(DERIVED_PREFIX) || token.length > 1024) return null
      const dot = token.indexOf('.', DERIVED_PREFIX.length)
      if (dot < 0) return null
      const payload = Buffer.from(token.slice(DERIVED_PREFIX.length, dot), 'base64url').toString()
      const given = Buffer.from(token.slice(dot + 1), 'base64url')
      const expected = sign(payload)
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null
      const [identityId, authority, generation, expiresAt, extra] = payload.split('\n')
      if (extra !== undefined || !identityId || !authority || !generation || !expiresAt) return null
      return { identityId, authority, generation: Number(generation), expiresAt: Number(expiresAt) }
    },
  }
}
export type TokenKeys = ReturnType<typeof tokenKeys>

/** A new identity id: `id_` + 20 hex digits (one URI path segment, as boards require). */
export const newIdentityId = () => `id_${randomBytes(10).toString('hex')}`
export const newAccountId = () => `acct_${randomBytes(10).toString('hex')}`

export const unauthorized = (message = 'a valid token is required') => new WireError('unauthorized', message)
