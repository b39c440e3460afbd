import type { Db, Ident } from '../../../libs/shared/db/index.js'
import type { EmittedSignal } from '../../../client/src/index.js'

export interface SearchQuery {
  cursor: number | null
  limit: number
  q: string | null
  tags: string[]
  type: string | null
  origin: string | null
  board: string | null
  sinceMs: number | null
}

/**
 * Most rows, and bytes of signals, one insert statement carries (a single larger signal goes alone):
 * what indexing a page holds at once beside the page's bytes, however large the page.
 */
export const INDEX_BATCH = Object.freeze({ rows: 64, bytes: 65_536 })

/** A board's share of the index, and how long a pinned signal stays. */
export interface IndexQuota {
  rows: number
  bytes: number
  pinHorizonSeconds: number
}

export interface SearchPage {
  /** Each signal as its board emitted it, plus `board`: the authority it came from. */
  signals: Array<Record<string, unknown>>
  nextCursor: number
}

/**
 * The search index's SQL. @NOTE the cursor promise: every index write takes one transaction-level
 * advisory lock before it draws its `seq`s, so seqs commit in the order they are drawn, and a
 * reader that sees seq n sees every seq below it. A page's nextCursor is therefore never past a
 * row someone could still commit.
 */
export function indexStore(db: Db, s: Ident) {
  const lockKey = `wire:aggregator-index:${s}`
  // @NOTE node-postgres keeps a string parameter reachable past its statement (under a pinned flood
  // each batch's text outlived young collections into the old generation); a Buffer's bytes are off
  // V8's heap, and json's binary form is its text. PGlite takes a Uint8Array as bytea: a string there.
  const jsonParam = (text: string) => (db.kind === 'postgres' ? Buffer.from(text) : text)
  // a pinned signal is held to the pin horizon ($3 seconds from now), not kept for good
  const insertSql = `
    insert into ${s}.indexed_signals (seq, board, id, type, tags, origin, pinned, created_at, expires_at, signal, search, bytes)
    select nextval('${s}.indexed_signals_seq'), $1, x->>'id', x->>'type', array(select json_array_elements_text(x->'tags')),
      x->>'origin', coalesce((x->>'pinned')::boolean, false), (x->>'createdAt')::timestamptz,
      case when coalesce((x->>'pinned')::boolean, false) then now() + $3::int * interval '1 second' else (x->>'expiresAt')::timestamptz end, x,
      jsonb_to_tsvector('simple', (x->'payload')::jsonb, '["string"]'), octet_length(x::text)
    from (select x from json_array_elements($2::json) with ordinality t(x, n) order by n) page
    on conflict (board, id) do nothing
    returning bytes`
  /** Deleted rows given back to their boards' shares; the statement answers how many went. */
  const giveBack = (deleteSql: string) => `
    with gone as (${deleteSql} returning board, bytes),
    per as (select board, count(*) n, sum(bytes) b from gone group by board),
    upd as (update ${s}.registered_boards r set index_rows = greatest(0, r.index_rows - per.n), index_bytes = greatest(0, r.index_bytes - per.b)
            from per where r.authority = per.board returning 1)
    select coalesce((select sum(n) from per), 0)::int n, (select count(*) from upd) boards`
  const searchSql = (newest: boolean) => `
    with head as (select coalesce(max(seq), 0) head from ${s}.indexed_signals),
    hits as (
      select seq, board, signal::text signal from ${s}.indexed_signals
      where ($1::bigint is null or seq > $1::bigint)
        and expires_at > now()
        and ($2::text is null or search @@ websearch_to_tsquery('simple', $2::text))
        and (cardinality($3::text[]) = 0 or tags && $3::text[])
        and ($4::text is null or type = $4::text)
        and ($5::text is null or origin = $5::text)
        and ($6::text is null or board = $6::text)
        and ($7::timestamptz is null or created_at > $7::timestamptz)
      order by seq ${newest ? 'desc' : 'asc'} limit $8::int)
    select (select head from head) head, hits.* from (select 1) one left join hits on true order by seq`
  return {
    /**
     * Indexes one page of a board's feed and stores the board's cursor after it, in one transaction.
     * The signals are taken one at a time and written in statements of at most INDEX_BATCH rows and
     * bytes, so a page is never held whole as rows or as one statement's text. The page is cut where
     * the board's share of the index (rows, bytes) ends; a cut page marks the board over quota
     * (`cut: true`), and the cursor still moves past it.
     */
    async add(
      board: string,
      signals: Iterable<EmittedSignal>,
      feedCursor: number,
      quota: IndexQuota,
    ): Promise<{ added: number; cut: boolean }> {
      return db.transaction(async (tx) => {
        await tx.query(`select pg_advisory_xact_lock(hashtext($1))`, [lockKey])
        const { rows: held } = await tx.query<{ index_rows: string; index_bytes: string }>(
          `select index_rows, index_bytes from ${s}.registered_boards where authority = $1 for update`,
          [board],
        )
        let rows = Number(held[0]?.index_rows ?? 0)
        let bytes = Number(held[0]?.index_bytes ?? 0)
        let added = 0
        let addedBytes = 0
        let batch: string[] = []
        let batchBytes = 0
        const flush = async () => {
          if (!batch.length) return
          const r = await tx.query<{ bytes: number }>(insertSql, [board, jsonParam(`[${batch.join(',')}]`), quota.pinHorizonSeconds])
          added += r.rowCount
          for (const x of r.rows) addedBytes += x.bytes
          batch = []
          batchBytes = 0
        }
        let cut = false
        for (const sig of signals) {
          const text = JSON.stringify(sig)
          const size = Buffer.byteLength(text, 'utf8')
          if (rows + 1 > quota.rows || bytes + size > quota.bytes) {
            cut = true
            break
          }
          if (batch.length >= INDEX_BATCH.rows || (batch.length > 0 && batchBytes + size > INDEX_BATCH.bytes)) await flush()
          rows++
          bytes += size
          batch.push(text)
          batchBytes += size
        }
        await flush()
        await tx.query(
          `update ${s}.registered_boards set feed_cursor = $2, index_rows = index_rows + $3, index_bytes = index_bytes + $4,
             over_quota_at = case when $5 then now() else over_quota_at end, over_quota_reason = case when $5 then 'index_quota' else over_quota_reason end
           where authority = $1`,
          [board, feedCursor, added, addedBytes, cut],
        )
        return { added, cut }
      })
    },
    async search(q: SearchQuery): Promise<SearchPage> {
      const { rows } = await db.query<{ head: string; seq: string | null; board: string | null; signal: string | null }>(
        searchSql(q.cursor === null),
        [q.cursor, q.q, q.tags, q.type, q.origin, q.board, q.sinceMs === null ? null : new Date(q.sinceMs).toISOString(), q.limit],
      )
      const hits = rows.filter((r) => r.seq !== null)
      const head = Number(rows[0]?.head ?? 0)
      const full = hits.length === q.limit && q.cursor !== null
      const last = hits.length ? Number(hits[hits.length - 1]!.seq) : (q.cursor ?? 0)
      return {
        signals: hits.map((r) => ({ ...(JSON.parse(r.signal!) as Record<string, unknown>), board: r.board })),
        nextCursor: full ? last : Math.max(head, last, q.cursor ?? 0),
      }
    },
    /** Indexed ids of a board checked longest ago, for the removal check. */
    async oldestChecked(board: string, n: number): Promise<string[]> {
      const { rows } = await db.query<{ id: string }>(`select id from ${s}.indexed_signals where board = $1 order by checked_at limit $2`, [
        board,
        n,
      ])
      return rows.map((r) => r.id)
    },
    async touch(board: string, ids: string[]): Promise<void> {
      if (ids.length)
        await db.query(`update ${s}.indexed_signals set checked_at = now() where board = $1 and id = any($2::text[])`, [board, ids])
    },
    async remove(board: string, ids: string[]): Promise<number> {
      if (!ids.length) return 0
      const { rows } = await db.query<{ n: number }>(
        giveBack(`delete from ${s}.indexed_signals where board = $1 and id = any($2::text[])`),
        [board, ids],
      )
      return rows[0]!.n
    },
    /** Expired rows (pinned ones at their horizon) purged; a board over quota whose share fell below 90 % is followed again. */
    async purgeExpired(quota: Pick<IndexQuota, 'rows' | 'bytes'>): Promise<number> {
      const { rows } = await db.query<{ n: number }>(
        giveBack(`delete from ${s}.indexed_signals where expires_at < now() - interval '1 minute'`),
      )
      await db.query(
        `update ${s}.registered_boards set over_quota_at = null, over_quota_reason = null
         where over_quota_at is not null and index_rows < $1 and index_bytes < $2`,
        [Math.floor(quota.rows * 0.9), Math.floor(quota.bytes * 0.9)],
      )
      return rows[0]!.n
    },
    /** Marks a board over quota: not followed until a recheck finds it under 90 % again. */
    async markOverQuota(board: string, reason: string): Promise<void> {
      await db.query(`update ${s}.registered_boards set over_quota_at = now(), over_quota_reason = $2 where authority = $1`, [
        board,
        reason.slice(0, 100),
      ])
    },
  }
}
export type IndexStore = ReturnType<typeof indexStore>
