import { createHash, timingSafeEqual } from 'node:crypto'
import { WireError } from '../domain/index.js'
import type { ClientLimits } from '../limits/index.js'
import { bearerTokenOrNull } from './bearer.js'

const digest = (s: string) => createHash('sha256').update(s).digest()

/** Checks one admin request: its Authorization header and the client address it came from. */
export type AdminCheck = (authorization: string | string[] | undefined, address: string) => Promise<void>

/**
 * The door to the admin API: 501 admin_disabled when no admin token is configured; the right token
 * is always accepted (compared in constant time over digests), whoever else shares the address; a
 * wrong one is 401 unauthorized and counted, and once the address is over its budget of failed
 * attempts further wrong ones are 429. An attacker behind the operator's NAT or proxy can spend
 * that budget but lock no one out: guessing a 16+ character token is not the threat, denial of
 * moderation during an attack is (docs/security.md "Admin").
 */
export function adminGuard(adminToken: string | undefined, limits: Pick<ClientLimits, 'adminFailed'>): AdminCheck {
  const expected = adminToken ? digest(adminToken) : null
  return async (authorization, address) => {
    if (!expected) throw new WireError('admin_disabled', 'admin API is disabled: SERVER_ADMIN_TOKEN is not set')
    const token = bearerTokenOrNull(authorization)
    if (token !== null && timingSafeEqual(digest(token), expected)) return
    await limits.adminFailed(address) // 429 once the address is over its failure budget
    throw new WireError('unauthorized', 'admin token required')
  }
}
