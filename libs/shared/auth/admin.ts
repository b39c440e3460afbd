import { createHash, timingSafeEqual } from 'node:crypto'
import { WireError } from '../domain/index.js'
import type { ClientLimits } from '../limits/index.js'
import { bearerToken } from './bearer.js'

const digest = (s: string) => createHash('sha256').update(s).digest()

/** Checks one admin request: its Authorization header and the client address it came from. */
export type AdminCheck = (authorization: string | string[] | undefined, address: string) => Promise<void>

/**
 * The door to the admin API: 501 admin_disabled when no admin token is configured; 429 while the
 * address is over its budget of failed attempts (before the token is even compared, so guessing
 * stops); 401 unauthorized unless the bearer token matches (compared in constant time over
 * digests), and the failure is counted.
 */
export function adminGuard(adminToken: string | undefined, limits: Pick<ClientLimits, 'adminAllowed' | 'adminFailed'>): AdminCheck {
  const expected = adminToken ? digest(adminToken) : null
  return async (authorization, address) => {
    if (!expected) throw new WireError('admin_disabled', 'admin API is disabled: SERVER_ADMIN_TOKEN is not set')
    limits.adminAllowed(address)
    let token: string | null = null
    try {
      token = bearerToken(authorization)
    } catch {
      token = null
    }
    if (token !== null && timingSafeEqual(digest(token), expected)) return
    await limits.adminFailed(address)
    throw new WireError('unauthorized', 'admin token required')
  }
}
