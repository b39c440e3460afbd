import type { Invalidation } from './types.js'

// What travels between processes. Anyone who can reach Redis can publish, so every message is
// parsed strictly and anything else is dropped.

/** An invalidation plus `n`, a random id that lets a receiver drop the copy a second path brings. */
export type InvalidationMessage = Invalidation & { n: string }

const MAX_ID = 128

export const encodeWake = (head: number) => String(head)

export function decodeWake(text: string): number | null {
  if (!/^\d{1,16}$/.test(text)) return null
  const head = Number(text)
  return Number.isSafeInteger(head) ? head : null
}

export const encodeInvalidation = (m: InvalidationMessage) => JSON.stringify(m)

export function decodeInvalidation(text: string): InvalidationMessage | null {
  if (text.length > 512) return null
  let v: unknown
  try {
    v = JSON.parse(text)
  } catch {
    return null
  }
  if (typeof v !== 'object' || v === null) return null
  const o = v as Record<string, unknown>
  if (typeof o.n !== 'string' || o.n.length === 0 || o.n.length > MAX_ID) return null
  if (o.kind === 'board' || o.kind === 'rules') return { kind: o.kind, n: o.n }
  if (o.kind === 'signal' && typeof o.id === 'string' && o.id.length > 0 && o.id.length <= MAX_ID)
    return { kind: 'signal', id: o.id, n: o.n }
  return null
}
