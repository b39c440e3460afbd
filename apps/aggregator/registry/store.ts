import type { Db, Ident } from '../../../libs/shared/db/index.js'
import type { BoardDescription } from './discovery.js'

/** up: answering; down: failing for AGGREGATOR_DOWN_AFTER_SECONDS; dropped: failing for AGGREGATOR_DROP_AFTER_SECONDS (listed, nothing else). */
export type BoardStatus = 'up' | 'down' | 'dropped'

export interface RegisteredBoard extends BoardDescription {
  status: BoardStatus
  registeredAt: string
  checkedAt: string
  lastOkAt: string
  feedCursor: number | null
  listSeq: number
  /** Its share of the search index. */
  indexRows: number
  indexBytes: number
  /** Set while the board is over its quota (and not followed): when, and why. */
  overQuotaAt: string | null
  overQuotaReason: string | null
}

/** A registry row as PostgreSQL returns it: the description's columns, then its own. */
interface Row extends BoardDescription {
  status: BoardStatus
  registered_at: Date
  checked_at: Date
  last_ok_at: Date
  feed_cursor: string | null
  list_seq: string
  index_rows: string
  index_bytes: string
  over_quota_at: Date | null
  over_quota_reason: string | null
}

const toBoard = (r: Row): RegisteredBoard => ({
  authority: r.authority,
  url: r.url,
  name: r.name,
  description: r.description,
  limits: r.limits,
  features: r.features,
  status: r.status,
  registeredAt: r.registered_at.toISOString(),
  checkedAt: r.checked_at.toISOString(),
  lastOkAt: r.last_ok_at.toISOString(),
  feedCursor: r.feed_cursor === null ? null : Number(r.feed_cursor),
  listSeq: Number(r.list_seq),
  indexRows: Number(r.index_rows ?? 0),
  indexBytes: Number(r.index_bytes ?? 0),
  overQuotaAt: r.over_quota_at ? r.over_quota_at.toISOString() : null,
  overQuotaReason: r.over_quota_reason ?? null,
})

/** The registry's SQL: boards, their health and feed cursors, blocked authorities. */
export function registryStore(db: Db, s: Ident) {
  return {
    async get(authority: string): Promise<RegisteredBoard | null> {
      const { rows } = await db.query<Row>(`select * from ${s}.registered_boards where authority = $1`, [authority])
      return rows[0] ? toBoard(rows[0]) : null
    },
    async byUrl(url: string): Promise<RegisteredBoard | null> {
      const { rows } = await db.query<Row>(`select * from ${s}.registered_boards where url = $1`, [url])
      return rows[0] ? toBoard(rows[0]) : null
    },
    /** Boards that count toward AGGREGATOR_MAX_BOARDS: every one not dropped. */
    async count(): Promise<number> {
      const { rows } = await db.query<{ n: string }>(`select count(*) n from ${s}.registered_boards where status <> 'dropped'`)
      return Number(rows[0]!.n)
    },
    async isBlocked(authority: string): Promise<boolean> {
      return (await db.query(`select 1 from ${s}.blocked_authorities where authority = $1`, [authority])).rowCount > 0
    },
    /** Inserts, refreshes the same authority at the same URL, or revives a dropped one; null when the authority is taken by another URL. */
    async upsert(b: BoardDescription): Promise<{ board: RegisteredBoard; created: boolean } | null> {
      const { rows } = await db.query<Row & { created: boolean }>(
        `insert into ${s}.registered_boards (authority, url, name, description, limits, features)
         values ($1, $2, $3, $4, $5::jsonb, $6::text[])
         on conflict (authority) do update set url = excluded.url, name = excluded.name, description = excluded.description,
           limits = excluded.limits, features = excluded.features, status = 'up', checked_at = now(), last_ok_at = now(), last_error = null
           where registered_boards.url = excluded.url or registered_boards.status = 'dropped'
         returning *, (xmax = 0) created`,
        [b.authority, b.url, b.name, b.description, JSON.stringify(b.limits), b.features],
      )
      return rows[0] ? { board: toBoard(rows[0]), created: rows[0].created } : null
    },
    async list(o: {
      after: number
      limit: number
      name: string | null
      feature: string | null
      status?: BoardStatus | null
    }): Promise<RegisteredBoard[]> {
      const { rows } = await db.query<Row>(
        `select * from ${s}.registered_boards
         where list_seq > $1 and ($2::text is null or strpos(lower(name), lower($2::text)) > 0)
           and ($3::text is null or $3::text = any(features)) and ($5::text is null or status = $5::text)
         order by list_seq limit $4`,
        [o.after, o.name, o.feature, o.limit, o.status ?? null],
      )
      return rows.map(toBoard)
    },
    /** The boards still checked, proxied and followed (not dropped). */
    async active(): Promise<RegisteredBoard[]> {
      return (await db.query<Row>(`select * from ${s}.registered_boards where status <> 'dropped' order by list_seq`)).rows.map(toBoard)
    },
    /** Dropped boards listed for `seconds` since they were dropped are forgotten (the registry does not fill for good). */
    async forgetDropped(seconds: number): Promise<number> {
      return (
        await db.query(
          `delete from ${s}.registered_boards where status = 'dropped' and checked_at < now() - $1::int * interval '1 second'`,
          [seconds],
        )
      ).rowCount
    },
    async remove(authority: string): Promise<boolean> {
      return (await db.query(`delete from ${s}.registered_boards where authority = $1`, [authority])).rowCount > 0
    },
    async block(authority: string): Promise<void> {
      await db.transaction(async (tx) => {
        await tx.query(`insert into ${s}.blocked_authorities (authority) values ($1) on conflict do nothing`, [authority])
        await tx.query(`delete from ${s}.registered_boards where authority = $1`, [authority])
      })
    },
    async unblock(authority: string): Promise<boolean> {
      return (await db.query(`delete from ${s}.blocked_authorities where authority = $1`, [authority])).rowCount > 0
    },
    async markOk(b: BoardDescription): Promise<void> {
      await db.query(
        `update ${s}.registered_boards set name = $2, description = $3, limits = $4::jsonb, features = $5::text[],
           status = 'up', checked_at = now(), last_ok_at = now(), last_error = null where authority = $1`,
        [b.authority, b.name, b.description, JSON.stringify(b.limits), b.features],
      )
    },
    /**
     * A failed check: down once it has failed for downAfter seconds, dropped after dropAfter. A
     * dropped board stays in the listing; its indexed signals go, and a new registration revives it.
     */
    async markFailed(authority: string, reason: string, downAfterSeconds: number, dropAfterSeconds: number): Promise<BoardStatus> {
      return db.transaction(async (tx) => {
        const { rows } = await tx.query<{ status: BoardStatus }>(
          `update ${s}.registered_boards set checked_at = now(), last_error = $2,
             status = case when last_ok_at <= now() - $4::int * interval '1 second' then 'dropped'
                           when last_ok_at <= now() - $3::int * interval '1 second' then 'down' else status end,
             feed_cursor = case when last_ok_at <= now() - $4::int * interval '1 second' then null else feed_cursor end,
             index_rows = case when last_ok_at <= now() - $4::int * interval '1 second' then 0 else index_rows end,
             index_bytes = case when last_ok_at <= now() - $4::int * interval '1 second' then 0 else index_bytes end
           where authority = $1 returning status`,
          [authority, reason.slice(0, 200), downAfterSeconds, dropAfterSeconds],
        )
        const status = rows[0]?.status ?? 'dropped'
        if (status === 'dropped') await tx.query(`delete from ${s}.indexed_signals where board = $1`, [authority])
        return status
      })
    },
  }
}
export type RegistryStore = ReturnType<typeof registryStore>
