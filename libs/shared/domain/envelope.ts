import { LIMITS } from './limits.js'
import { invalid, WireError } from './errors.js'
import { parseRawObject, type RawMember } from './json-raw.js'
import { hasBidiControl, hasInvisible } from './text.js'

/** A validated publish, before it has an id, an origin or a seq. */
export interface Envelope {
  type: string
  tags: string[]
  ttl: number
  /** The reference exactly as sent (raw id or sw:// URI); resolved against the board by the writer. */
  ref: string | null
  /** The payload as stored and served: the client's members in order, `$type`/`$tags` normalised in. */
  payloadText: string
}

/**
 * Body text → envelope, in the order of docs/protocol.md ("Publish check order"): invalid_request, then payload_too_large, then
 * reply_requires_ref.
 */
export function parseEnvelope(body: string, defaultTtl: number): Envelope {
  const members = parseRawObject(body)
  const get = (k: string) => members.find((m) => m.key === k)?.value
  const type = parseType(get('$type'))
  const tags = parseTags(get('$tags'))
  const ttl = parseTtl(get('$ttl'), defaultTtl)
  const rawRef = get('$refId')
  if (rawRef !== undefined && rawRef !== null && typeof rawRef !== 'string') throw invalid('$refId must be a string')
  const ref = typeof rawRef === 'string' && rawRef.trim() !== '' ? rawRef.trim() : null

  const payloadText = buildPayload(members, type, tags)
  const payloadBytes = Buffer.byteLength(payloadText, 'utf8')
  if (payloadBytes > LIMITS.maxPayloadBytes)
    throw new WireError('payload_too_large', `payload is ${payloadBytes} bytes; the limit is ${LIMITS.maxPayloadBytes}`, {
      maxPayloadBytes: LIMITS.maxPayloadBytes,
      payloadBytes,
    })
  if (type === 'reply' && ref === null) throw new WireError('reply_requires_ref', 'a reply needs $refId')
  return { type, tags, ttl, ref, payloadText }
}

function parseType(v: unknown): string {
  if (typeof v !== 'string' || v.trim() === '') throw invalid('$type is required and must be a non-empty string')
  const t = v.trim()
  if (longerThan(t, 128)) throw invalid('$type is longer than 128 characters', { maxLength: 128 })
  if (hasBidiControl(t)) throw invalid('$type contains a bidirectional control character (U+202A–202E, U+2066–2069, …)')
  if (hasInvisible(t)) throw invalid('$type contains an invisible character (U+200B, U+00AD, U+FEFF, U+2060, …)')
  return t
}

/** Length in characters (code points), as the limits are worded, not UTF-16 units: an emoji is one character. */
export const charLength = (s: string) => {
  let n = 0
  for (const _ of s) n++
  return n
}

/** More than `max` characters: a text of at most `max` UTF-16 units has at most `max` code points, so only longer ones are counted. */
const longerThan = (s: string, max: number) => s.length > max && charLength(s) > max

/** Normalises publish and read tags alike: trimmed, lower-cased, empty and duplicate dropped. */
export function normaliseTags(raw: readonly string[]): string[] {
  // one pass, in the order first seen (every publish runs it: no array per step)
  const seen = new Set<string>()
  for (const t of raw) {
    const tag = t.trim().toLowerCase()
    if (tag !== '') seen.add(tag)
  }
  return [...seen]
}

function parseTags(v: unknown): string[] {
  if (v === undefined || v === null) return []
  if (!Array.isArray(v)) throw invalid('$tags must be an array of strings')
  for (const t of v) if (typeof t !== 'string') throw invalid('$tags must be an array of strings')
  const tags = normaliseTags(v as string[])
  if (tags.length > LIMITS.maxTags) throw invalid(`at most ${LIMITS.maxTags} tags`, { maxTags: LIMITS.maxTags, tags: tags.length })
  for (const t of tags)
    if (longerThan(t, LIMITS.maxTagLength))
      throw invalid(`a tag is longer than ${LIMITS.maxTagLength} characters`, { maxTagLength: LIMITS.maxTagLength })
  for (const t of tags)
    if (hasBidiControl(t)) throw invalid('a tag contains a bidirectional control character (U+202A–202E, U+2066–2069, …)')
  for (const t of tags) if (hasInvisible(t)) throw invalid('a tag contains an invisible character (U+200B, U+00AD, U+FEFF, U+2060, …)')
  return tags
}

function parseTtl(v: unknown, defaultTtl: number): number {
  if (v === undefined || v === null) return defaultTtl
  if (typeof v !== 'number' || !Number.isInteger(v) || v < LIMITS.ttlMin || v > LIMITS.ttlMax)
    throw invalid(`$ttl must be an integer from ${LIMITS.ttlMin} to ${LIMITS.ttlMax}`, { ttlMin: LIMITS.ttlMin, ttlMax: LIMITS.ttlMax })
  return v
}

function buildPayload(members: RawMember[], type: string, tags: string[]): string {
  const parts: string[] = []
  let sawTags = false
  for (const m of members) {
    if (m.key === '$ttl' || m.key === '$refId') continue
    if (m.key === '$type') parts.push(`${m.rawKey}:${JSON.stringify(type)}`)
    else if (m.key === '$tags') parts.push(`${m.rawKey}:${JSON.stringify(tags)}`), (sawTags = true)
    else parts.push(`${m.rawKey}:${m.rawValue}`)
  }
  if (!sawTags) parts.push(`"$tags":${JSON.stringify(tags)}`)
  return `{${parts.join(',')}}`
}
