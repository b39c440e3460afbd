import { EMITTED_SIGNAL_FIELDS, LIMITS, type EmittedSignal } from '../../../libs/shared/domain/index.js'
import { isSignalId } from '../../../libs/shared/domain/index.js'
import { UNPARSED } from './page-scan.js'

/** Why a followed signal was not indexed (counted by reason, never its content). */
export type Rejection = 'shape' | 'id' | 'uri' | 'payload' | 'ttl' | 'time' | 'tags'

/** A board's clock may run this far ahead of ours before its signals are refused. */
const CLOCK_SLACK_MS = 5 * 60_000

const str = (v: unknown, max: number): v is string => typeof v === 'string' && v.length <= max
const chars = (s: string) => [...s].length

/**
 * A signal a board emitted, held to the protocol before it is indexed: the id's shape, its `uri`
 * naming this board, a payload within maxPayloadBytes, a TTL within the limits and an `expiresAt`
 * no later than a TTL from now, bounded tags and strings. What passes is rebuilt from the emitted
 * fields only, so nothing a board adds beside them is stored.
 */
function validateSignal(x: unknown, authority: string, nowMs: number): EmittedSignal | Rejection {
  if (typeof x !== 'object' || x === null || Array.isArray(x)) return 'shape'
  const s = x as Record<string, unknown>
  if (!str(s.id, 20) || !isSignalId(s.id)) return 'id'
  if (s.uri !== `sw://${authority}/signals/${s.id}`) return 'uri'
  if (typeof s.payload !== 'object' || s.payload === null || Array.isArray(s.payload)) return 'payload'
  if (Buffer.byteLength(JSON.stringify(s.payload), 'utf8') > LIMITS.maxPayloadBytes) return 'payload'
  if (typeof s.ttl !== 'number' || !Number.isInteger(s.ttl) || s.ttl < LIMITS.ttlMin || s.ttl > LIMITS.ttlMax) return 'ttl'
  if (!str(s.type, 512) || chars(s.type) > 128 || s.type.trim() === '') return 'shape'
  if (!Array.isArray(s.tags) || s.tags.length > LIMITS.maxTags || !s.tags.every((t) => str(t, 256) && chars(t) <= LIMITS.maxTagLength))
    return 'tags'
  if (!str(s.origin, 256) || !str(s.originUri, 600) || !(s.originName === null || str(s.originName, 256))) return 'shape'
  if (typeof s.originVerified !== 'boolean' || typeof s.pinned !== 'boolean' || typeof s.boostBits !== 'number') return 'shape'
  if (!(s.refId === null || str(s.refId, 64)) || !(s.refUri === null || str(s.refUri, 400))) return 'shape'
  if (!str(s.createdAt, 64) || !str(s.expiresAt, 64)) return 'time'
  const created = Date.parse(s.createdAt)
  const expires = Date.parse(s.expiresAt)
  if (!Number.isFinite(created) || !Number.isFinite(expires) || created > nowMs + CLOCK_SLACK_MS) return 'time'
  // a TTL is at most ttlMax: an expiresAt past that (2099) is not a TTL the protocol allows
  if (expires > created + LIMITS.ttlMax * 1000 + 1000 || expires > nowMs + LIMITS.ttlMax * 1000 + CLOCK_SLACK_MS) return 'ttl'
  const out: Record<string, unknown> = {}
  for (const k of EMITTED_SIGNAL_FIELDS) out[k] = s[k]
  return out as unknown as EmittedSignal
}

/**
 * A page's signals that hold to the protocol, taken one at a time as the indexer asks (nothing of
 * the page is gathered here); each refusal is counted into `refused` by reason. A signal the page
 * scan did not parse (`UNPARSED`: past SIGNAL_TEXT_MAX_BYTES, or not JSON) is refused as `payload`.
 */
export function* validated(page: Iterable<unknown>, authority: string, refused: Partial<Record<Rejection, number>>, nowMs = Date.now()) {
  for (const x of page) {
    const v = x === UNPARSED ? 'payload' : validateSignal(x, authority, nowMs)
    if (typeof v === 'string') refused[v] = (refused[v] ?? 0) + 1
    else yield v
  }
}
