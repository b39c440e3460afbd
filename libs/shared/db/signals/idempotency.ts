import type { Signal } from '../../domain/index.js'
import type { Ident, Queryable } from '../types.js'
import { signalColumns, toSignal, type SignalRow } from './row.js'

/** How long a key holds its signal: a retry after this publishes anew, and the sweeper deletes the row. */
export const IDEMPOTENCY_WINDOW_SECONDS = 86_400

/** What a key's signal became when a moderator removed it: a retry must not get it back, nor publish it again. */
export const REMOVED = 'removed'

export interface Reservation {
  signalId: string
  ageMs: number
}

/** The idempotency_keys table (primary only): (identity, key) → the signal id a publish stored or is storing. */
export function idempotencyKeys(db: Queryable, s: Ident) {
  const live = `created_at > now() - ${IDEMPOTENCY_WINDOW_SECONDS} * interval '1 second'`
  const findSql = `select signal_id, extract(epoch from now() - created_at) * 1000 as age_ms from ${s}.idempotency_keys
    where identity = $1 and key = $2 and ${live}`
  // a dead row (older than the window) is taken over as if it were absent
  const reserveSql = `insert into ${s}.idempotency_keys as k (identity, key, signal_id) values ($1, $2, $3)
    on conflict (identity, key) do update set signal_id = excluded.signal_id, created_at = now()
      where not (k.${live})
    returning signal_id`
  // the lookups of concurrent publishes in one statement: the pairs as one JSON text of [identity, key] arrays
  const findManySql = `select q.ord::int as i, k.signal_id, extract(epoch from now() - k.created_at) * 1000 as age_ms
    from json_array_elements($1::json) with ordinality as q(pair, ord)
    join ${s}.idempotency_keys k on k.identity = q.pair->>0 and k.key = q.pair->>1
    where k.${live}`
  const takeOverSql = `update ${s}.idempotency_keys set signal_id = $4, created_at = now()
    where identity = $1 and key = $2 and signal_id = $3 returning signal_id`
  const releaseSql = `delete from ${s}.idempotency_keys where identity = $1 and key = $2 and signal_id = $3`
  const signalSql = `select ${signalColumns('x')}, x.removed_at is not null as removed from ${s}.signals x where id = $1`
  const purgeSql = `with doomed as (
      select identity, key from ${s}.idempotency_keys where not (${live}) order by created_at limit $1 for update skip locked
    ) delete from ${s}.idempotency_keys k using doomed d where k.identity = d.identity and k.key = d.key`

  return {
    async find(identity: string, key: string): Promise<Reservation | null> {
      const r = (await db.query<{ signal_id: string; age_ms: string | number }>(findSql, [identity, key])).rows[0]
      return r ? { signalId: r.signal_id, ageMs: Number(r.age_ms) } : null
    },
    /** find() for many (identity, key) pairs in one statement: the i-th answer is the i-th pair's. */
    async findMany(pairs: ReadonlyArray<readonly [identity: string, key: string]>): Promise<Array<Reservation | null>> {
      const text = `[${pairs.map(([identity, key]) => `[${JSON.stringify(identity)},${JSON.stringify(key)}]`).join(',')}]`
      const { rows } = await db.query<{ i: number; signal_id: string; age_ms: string | number }>(findManySql, [text])
      const out: Array<Reservation | null> = pairs.map(() => null)
      for (const r of rows) out[r.i - 1] = { signalId: r.signal_id, ageMs: Number(r.age_ms) }
      return out
    },
    /** True when this call now holds the key for `signalId`; false when a live reservation holds it. */
    async reserve(identity: string, key: string, signalId: string): Promise<boolean> {
      return (await db.query(reserveSql, [identity, key, signalId])).rowCount > 0
    },
    /** Moves a reservation whose publish never stored its signal to a new id; false if it changed meanwhile. */
    async takeOver(identity: string, key: string, fromId: string, toId: string): Promise<boolean> {
      return (await db.query(takeOverSql, [identity, key, fromId, toId])).rowCount > 0
    },
    /** Frees the key after a publish that surely stored nothing, so a retry may try again at once. */
    async release(identity: string, key: string, signalId: string): Promise<void> {
      await db.query(releaseSql, [identity, key, signalId])
    },
    /** The stored signal a key points at (expired or not), REMOVED when a moderator removed it, null when none is stored. */
    async signal(id: string): Promise<Signal | typeof REMOVED | null> {
      const r = (await db.query<SignalRow & { removed: boolean }>(signalSql, [id])).rows[0]
      if (!r) return null
      return r.removed ? REMOVED : toSignal(r)
    },
    /** The sweeper: deletes up to `limit` rows older than the window; returns how many went. */
    async purgeBatch(limit: number): Promise<number> {
      return (await db.query(purgeSql, [limit])).rowCount
    },
  }
}
export type IdempotencyKeys = ReturnType<typeof idempotencyKeys>
