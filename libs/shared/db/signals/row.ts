import type { Signal } from '../../domain/index.js'

/** A `signals` row as pg and PGlite return it. int8 may arrive as string or bigint; timestamps as Date. */
export interface SignalRow {
  seq: string | number | bigint
  id: string
  origin: string
  origin_name: string | null
  origin_uri: string
  origin_verified: boolean
  type: string
  tags: string[]
  payload: string
  ref_id: string | null
  ttl_seconds: number
  created_at: Date
  expires_at: Date
  pinned: boolean
}

/** The one row-to-domain mapping. */
export function toSignal(r: SignalRow): Signal {
  return {
    seq: Number(r.seq),
    id: r.id,
    origin: r.origin,
    originName: r.origin_name,
    originUri: r.origin_uri,
    originVerified: r.origin_verified,
    type: r.type,
    tags: r.tags,
    payloadText: r.payload,
    ttl: r.ttl_seconds,
    pinned: r.pinned,
    refId: r.ref_id,
    createdAtMs: r.created_at.getTime(),
    expiresAtMs: r.expires_at.getTime(),
  }
}

export const SIGNAL_COLUMNS =
  'seq, id, origin, origin_name, origin_uri, origin_verified, type, tags, payload, ref_id, ttl_seconds, created_at, expires_at, pinned'
