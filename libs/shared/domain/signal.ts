import { isoFormatter } from './iso-time.js'
import { signalUri } from './sw-uri.js'

/** A stored signal as the domain sees it. `payloadText` is the verbatim payload JSON. */
export interface Signal {
  seq: number
  id: string
  origin: string
  originName: string | null
  originUri: string
  originVerified: boolean
  type: string
  tags: string[]
  payloadText: string
  ttl: number
  pinned: boolean
  refId: string | null
  createdAtMs: number
  expiresAtMs: number
}

/** Active = not expired, or pinned (a pinned signal is exempt from TTL). */
export const isActive = (s: Pick<Signal, 'pinned' | 'expiresAtMs'>, nowMs: number) => s.pinned || s.expiresAtMs > nowMs

/**
 * Still readable `graceMs` after expiry: the in-memory twin of the retention rule
 * (db/signals/retention.ts); removed signals never reach memory, so expiry is all it checks.
 */
export const survivesGrace = (s: Pick<Signal, 'pinned' | 'expiresAtMs'>, nowMs: number, graceMs: number) => isActive(s, nowMs - graceMs)

const createdAt = isoFormatter()
const expiresAt = isoFormatter()

/**
 * The emitted signal (docs/protocol.md "The signal object"), serialised once. Built by hand so the payload's
 * verbatim text is embedded as is. An ISO time has nothing JSON escapes.
 */
export function serializeSignal(s: Signal, authority: string): string {
  const str = JSON.stringify
  return (
    `{"id":${str(s.id)},"uri":${str(signalUri(authority, s.id))},"origin":${str(s.origin)},` +
    `"originName":${str(s.originName)},"originUri":${str(s.originUri)},"originVerified":${s.originVerified},` +
    `"type":${str(s.type)},"tags":${str(s.tags)},"payload":${s.payloadText},"ttl":${s.ttl},"boostBits":0,` +
    `"pinned":${s.pinned},"refId":${str(s.refId)},"refUri":${s.refId === null ? 'null' : str(signalUri(authority, s.refId))},` +
    `"createdAt":"${createdAt(s.createdAtMs)}","expiresAt":"${expiresAt(s.expiresAtMs)}"}`
  )
}
