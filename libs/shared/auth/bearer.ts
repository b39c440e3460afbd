import { WireError } from '../domain/index.js'

const MAX_TOKEN_LENGTH = 4096
/** Longest Authorization header looked at: "Bearer ", a longest token and a little white space. Longer is refused unread. */
export const MAX_AUTHORIZATION_LENGTH = MAX_TOKEN_LENGTH + 64

const SCHEME = 'bearer'
const WHITE = /\s/ // one character at a time: no quantifier, nothing to backtrack
const isSpace = (c: number) => (c < 0x80 ? c === 0x20 || (c >= 0x09 && c <= 0x0d) : WHITE.test(String.fromCharCode(c)))
/**
 * What a token never holds: white space (as isSpace), control characters and DEL. One character
 * class, no quantifier: a search that looks at each character once. @NOTE a regular expression
 * rather than a loop of `charCodeAt`: headers come as strings of several representations, and
 * optimised code then looks `charCodeAt` up generically at every character.
 */
const NOT_TOKEN = /[\s\x00-\x1f\x7f]/

/**
 * `Authorization: Bearer <token>` → the token, or null when the header is absent. Malformed → unauthorized.
 * One pass over at most MAX_AUTHORIZATION_LENGTH characters: no regular expression, so an
 * attacker's header costs linear time whatever it holds.
 */
export function bearerToken(header: string | string[] | undefined): string | null {
  if (header === undefined) return null
  if (Array.isArray(header) || typeof header !== 'string') throw new WireError('unauthorized', 'malformed Authorization header')
  if (header.length > MAX_AUTHORIZATION_LENGTH) throw new WireError('unauthorized', 'Authorization header is too long')
  let start = 0
  let end = header.length
  while (start < end && isSpace(header.charCodeAt(start))) start++
  while (end > start && isSpace(header.charCodeAt(end - 1))) end--
  const schemeEnd = start + SCHEME.length
  if (end <= schemeEnd || header.slice(start, schemeEnd).toLowerCase() !== SCHEME || !isSpace(header.charCodeAt(schemeEnd)))
    throw new WireError('unauthorized', 'Authorization must be "Bearer <token>"')
  let from = schemeEnd
  while (from < end && isSpace(header.charCodeAt(from))) from++
  // end > schemeEnd and the last character is not white space, so the token is not empty
  const token = header.slice(from, end)
  if (token.length > MAX_TOKEN_LENGTH) throw new WireError('unauthorized', 'malformed bearer token')
  if (NOT_TOKEN.test(token)) throw new WireError('unauthorized', 'malformed bearer token')
  return token
}

/** `bearerToken`, with a malformed header read as no token (for who may be anonymous: a read, a task's owner). */
export function bearerTokenOrNull(header: string | string[] | undefined): string | null {
  try {
    return bearerToken(header)
  } catch {
    return null
  }
}
