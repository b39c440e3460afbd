import type { Signal } from '../../domain/index.js'

/**
 * A `signals` row as the read queries select it (`signalColumns`). Times arrive as epoch
 * milliseconds and tags as JSON text: pg's timestamptz and array parsers cost more per row than
 * the query itself on a 100-row page. int8 may arrive as string, number or bigint (pg, PGlite).
 */
export interface SignalRow {
  seq: string | number | bigint
  id: string
  origin: string
  origin_name: string | null
  origin_uri: string
  origin_verified: boolean
  type: string
  tags_json: string
  payload: string
  ref_id: string | null
  ttl_seconds: number
  created_ms: string | number | bigint
  expires_ms: string | number | bigint
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
    tags: JSON.parse(r.tags_json) as string[],
    payloadText: r.payload,
    ttl: r.ttl_seconds,
    pinned: r.pinned,
    refId: r.ref_id,
    createdAtMs: Number(r.created_ms),
    expiresAtMs: Number(r.expires_ms),
  }
}

const epochMs = (col: string) => `(extract(epoch from ${col}) * 1000)::int8`

/** The select list `toSignal` reads, for rows of table alias `x` (or bare column names). */
export function signalColumns(x = ''): string {
  const c = (name: string) => (x ? `${x}.${name}` : name)
  return (
    `${c('seq')}, ${c('id')}, ${c('origin')}, ${c('origin_name')}, ${c('origin_uri')}, ${c('origin_verified')}, ${c('type')}, ` +
    `array_to_json(${c('tags')})::text as tags_json, ${c('payload')}, ${c('ref_id')}, ${c('ttl_seconds')}, ` +
    `${epochMs(c('created_at'))} as created_ms, ${epochMs(c('expires_at'))} as expires_ms, ${c('pinned')}`
  )
}
