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
 * The emitted signal (docs/protocol.md "The signal object"), serialised once. Built by hand so the payload's
 * verbatim text is embedded as is.
 */
export function serializeSignal(s: Signal, authority: string): string {
  const str = JSON.stringify
  return (
    `{"id":${str(s.id)},"uri":${str(signalUri(authority, s.id))},"origin":${str(s.origin)},` +
    `"originName":${str(s.originName)},"originUri":${str(s.originUri)},"originVerified":${s.originVerified},` +
    `"type":${str(s.type)},"tags":${str(s.tags)},"payload":${s.payloadText},"ttl":${s.ttl},"boostBits":0,` +
    `"pinned":${s.pinned},"refId":${str(s.refId)},"refUri":${s.refId === null ? 'null' : str(signalUri(authority, s.refId))},` +
    `"createdAt":${str(new Date(s.createdAtMs).toISOString())},"expiresAt":${str(new Date(s.expiresAtMs).toISOString())}}`
  )
}


/**
 * Serialisations kept with their signal objects (per authority) while those live: a tail keeps
 * each signal's JSON, and the answer to the publish that committed the signal, in the same
 * process, is built from that copy instead of serialising it again.
 */
const kept = new Map<string, WeakMap<Signal, string>>()
const NUL = /\u0000/

/** serializeSignal, kept with `s` (a tail entry's copy). */
export function serializeAndKeep(s: Signal, authority: string): string {
  let byObject = kept.get(authority)
  if (!byObject) kept.set(authority, (byObject = new WeakMap()))
  const json = serializeSignal(s, authority)
  // @NOTE V8 holds a concatenated string as a tree of its pieces (dozens here) until something reads
  // it whole, as a regular expression does: one flat string to keep, half the memory, and a single
  // object for the garbage collector to copy and trace while the pieces die young
  NUL.test(json)
  byObject.set(s, json)
  return json
}

/** The copy kept for `s` when there is one (it is in this process's tail), else serializeSignal. */
export const serializedSignal = (s: Signal, authority: string): string => kept.get(authority)?.get(s) ?? serializeSignal(s, authority)
