import { WireError } from '../domain/index.js'

const MAX_TOKEN_LENGTH = 4096

/** `Authorization: Bearer <token>` → the token, or null when the header is absent. Malformed → unauthorized. */
export function bearerToken(header: string | string[] | undefined): string | null {
  if (header === undefined) return null
  if (Array.isArray(header) || typeof header !== 'string') throw new WireError('unauthorized', 'malformed Authorization header')
  const m = /^\s*bearer\s+(.+?)\s*$/i.exec(header)
  if (!m) throw new WireError('unauthorized', 'Authorization must be "Bearer <token>"')
  const token = m[1]!
  if (token.length > MAX_TOKEN_LENGTH || /[\s\u0000-\u001f\u007f]/.test(token))
    throw new WireError('unauthorized', 'malformed bearer token')
  return token
}
