import type { Ident, Queryable } from '../types.js'
import { signalJsonSql } from './page-sql.js'

/**
 * Every signal not removed with `lo < seq <= hi`, in seq order, as its emitted JSON with what a
 * reader filters it by in memory, read in one snapshot with the feed's head, change number and
 * failover epoch (feed/chunk-cache.ts keeps these). Expired signals are in it: expiry is the
 * reader's to apply, each time, from `expires`.
 */
export interface SeqChunk {
  head: number
  changes: number
  epoch: number
  seqs: number[]
  /** Epoch ms, rounded up (so `expires > cutoff` in ms agrees with PostgreSQL's microseconds); Infinity when pinned. */
  expires: number[]
  tags: string[][]
  /** Every signal's JSON, one after the other: signal i ends at `ends[i]` (UTF-16 code units, as JS counts). */
  text: string
  ends: Uint32Array
}

type Row = { head: string; changes: string; epoch: string; body: string | null; text: string | null }

/**
 * One statement, one row: the rows aggregated by PostgreSQL into one JSON text (one parse here, no
 * per-row work in the driver) and the signals' JSON texts into one plain text, kept as it comes
 * (never escaped into the JSON and parsed back out: a chunk's load makes one large string, the one
 * the cache keeps, and little garbage). `hi` above the head reads up to the head only; the caller
 * checks `head`.
 */
export function chunkReader(db: Queryable, s: Ident) {
  const sql = `
    with h as (select seq as head, changes, failover_seq as epoch from ${s}.feed_head limit 1),
    r as (select x.seq, ${signalJsonSql('x', '$3')}, x.tags, case when x.pinned then null else ceil(extract(epoch from x.expires_at) * 1000)::int8 end as exp
          from ${s}.signals x where x.seq > $1::int8 and x.seq <= least($2::int8, (select head from h)) and x.removed_at is null)
    select h.head, h.changes, h.epoch,
      (select json_build_object('s', json_agg(seq order by seq), 'e', json_agg(exp order by seq), 't', json_agg(tags order by seq), 'n', json_agg(length(json) order by seq))::text from r) as body,
      (select string_agg(json, '' order by seq) from r) as text
    from h`
  return async function chunk(lo: number, hi: number, authority: string): Promise<SeqChunk> {
    const { rows } = await db.query<Row>(sql, [lo, hi, authority], { prepared: true })
    const r = rows[0]!
    const b = r.body === null ? null : (JSON.parse(r.body) as { s: number[] | null; e: Array<number | null>; t: string[][]; n: number[] })
    const seqs = b?.s ?? []
    const text = r.text ?? ''
    return {
      head: Number(r.head),
      changes: Number(r.changes),
      epoch: Number(r.epoch),
      seqs,
      expires: seqs.map((_, i) => b!.e[i] ?? Infinity),
      tags: b?.t ?? [],
      text,
      ends: ends(text, b?.n ?? []),
    }
  }
}

/**
 * Where each signal ends in `text`, from PostgreSQL's lengths in characters (code points): the same
 * in UTF-16 code units unless the text has a character past U+FFFF (two units in JS), then counted.
 */
function ends(text: string, lengths: number[]): Uint32Array {
  const out = new Uint32Array(lengths.length)
  const astral = /[\uD800-\uDBFF]/.test(text)
  for (let i = 0, at = 0; i < lengths.length; i++) {
    if (!astral) at += lengths[i]!
    else
      for (let n = lengths[i]!; n > 0; n--) {
        const c = text.charCodeAt(at)
        at += c >= 0xd800 && c <= 0xdbff ? 2 : 1
      }
    out[i] = at
  }
  return out
}
