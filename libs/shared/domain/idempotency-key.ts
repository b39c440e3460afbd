import { invalid } from './errors.js'

const MAX_IDEMPOTENCY_KEY_LENGTH = 255

/** The `Idempotency-Key` header: absent → null; 1–255 printable ASCII characters (no spaces) → the key; else invalid_request. */
export function parseIdempotencyKey(header: string | string[] | undefined): string | null {
  if (header === undefined) return null
  if (typeof header !== 'string') throw invalid('send one Idempotency-Key header')
  if (header.length === 0 || header.length > MAX_IDEMPOTENCY_KEY_LENGTH)
    throw invalid(`Idempotency-Key must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters`)
  for (let i = 0; i < header.length; i++) {
    const c = header.charCodeAt(i)
    if (c < 0x21 || c > 0x7e) throw invalid('Idempotency-Key must be printable ASCII without spaces')
  }
  return header
}
