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
  const insertSql = `
    insert into ${s}.indexed_signals (seq, board, id, type, tags, origin, pinned, created_at, expires_at, signal, search)
    select nextval('${s}.indexed_signals_seq'), $1, x->>'id', x->>'type', array(select json_array_elements_text(x->'tags')),
      x->>'origin', coalesce((x->>'pinned')::boolean, false), (x->>'createdAt')::timestamptz, (x->>'expiresAt')::timestamptz, x,
      jsonb_to_tsvector('simple', (x->'payload')::jsonb, '["string"]')
    from (select x from json_array_elements($2::json) with ordinality t(x, n) order by n) page
    on conflict (board, id) do nothing`
  const searchSql = (newest: boolean) => `
    with head as (select coalesce(max(seq), 0) head from ${s}.indexed_signals),
    hits as (
      select seq, board, signal::text signal from ${s}.indexed_signals
      where ($1::bigint is null or seq > $1::bigint)
        and (pinned or expires_at > now())
        and ($2::text is null or search @@ websearch_to_tsquery('simple', $2::text))
        and (cardinality($3::text[]) = 0 or tags && $3::text[])
        and ($4::text is null or type = $4::text)
        and ($5::text is null or origin = $5::text)
        and ($6::text is null or board = $6::text)
        and ($7::timestamptz is null or created_at > $7::timestamptz)
      order by seq ${newest ? 'desc' : 'asc'} limit $8::int)
    select (select head from head) head, hits.* from (select 1) one left join hits on true order by seq`
  return {
    /** Indexes one page of a board's feed and stores the board's cursor after it, in one transaction. */
    async add(board: string, signals: EmittedSignal[], feedCursor: number): Promise<number> {
      return db.transaction(async (tx) => {
        await tx.query(`select pg_advisory_xact_lock(hashtext($1))`, [lockKey])
        const added = signals.length ? (await tx.query(insertSql, [board, JSON.stringify(signals)])).rowCount : 0
        await tx.query(`update ${s}.registered_boards set feed_cursor = $2 where authority = $1`, [board, feedCursor])
        return added
      })
    },
    async search(q: SearchQuery): Promise<SearchPage> {
      const { rows } = await db.query<{ head: string; seq: string | null; board: string | null; signal: string | null }>(searchSql(q.cursor === null), [
        q.cursor,
        q.q,
        q.tags,
        q.type,
        q.origin,
        q.board,
        q.sinceMs === null ? null : new Date(q.sinceMs).toISOString(),
        q.limit,
      ])
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
      const { rows } = await db.query<{ id: string }>(`select id from ${s}.indexed_signals where board = $1 order by checked_at limit $2`, [board, n])
      return rows.map((r) => r.id)
    },
    async touch(board: string, ids: string[]): Promise<void> {
      if (ids.length) await db.query(`update ${s}.indexed_signals set checked_at = now() where board = $1 and id = any($2::text[])`, [board, ids])
    },
    async remove(board: string, ids: string[]): Promise<number> {
      return ids.length ? (await db.query(`delete from ${s}.indexed_signals where board = $1 and id = any($2::text[])`, [board, ids])).rowCount : 0
    },
    async purgeExpired(): Promise<number> {
      return (await db.query(`delete from ${s}.indexed_signals where not pinned and expires_at < now() - interval '1 minute'`)).rowCount
    },
  }
}
export type IndexStore = ReturnType<typeof indexStore>
