import { createHash, timingSafeEqual } from 'node:crypto'
import { WireError } from '../domain/index.js'
import { bearerToken } from './bearer.js'

const digest = (s: string) => createHash('sha256').update(s).digest()

/**
 * Returns a check for admin requests: 501 admin_disabled when no admin token is configured,
 * 401 unauthorized unless the bearer token matches (compared in constant time over digests).
 */
export function adminGuard(adminToken: string | undefined) {
  const expected = adminToken ? digest(adminToken) : null
  return (authorization: string | string[] | undefined): void => {
    if (!expected) throw new WireError('admin_disabled', 'admin API is disabled: SERVER_ADMIN_TOKEN is not set')
    let token: string | null = null
    try {
      token = bearerToken(authorization)
    } catch {
      token = null
    }
    if (token === null || !timingSafeEqual(digest(token), expected)) throw new WireError('unauthorized', 'admin token required')
  }
}
