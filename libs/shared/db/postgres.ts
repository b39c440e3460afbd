import pg from 'pg'
import { WireError } from '../domain/index.js'
import type { Db, QueryResult } from './types.js'

const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND', 'EPIPE', '57P01', '57P02', '57P03', '53300'])

/** True when the error says the server is unreachable or going away, not that the statement was wrong. */
export function isConnectionError(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | null
  const code = typeof e?.code === 'string' ? e.code : ''
  if (CONNECTION_CODES.has(code) || code.startsWith('08')) return true
  const msg = typeof e?.message === 'string' ? e.message : ''
  return /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error/.test(msg)
}

/** A down database is 503 unavailable (Retry-After), never a 500: the request may simply be retried. */
const unavailable = (err: unknown) =>
  isConnectionError(err) ? new WireError('unavailable', 'the database is unavailable; try again shortly', undefined, { retryAfter: 1, cause: err }) : err

export interface PostgresOptions {
  max?: number
  applicationName?: string
  /** Fails a connection attempt after this long, so a down primary answers 503 quickly. */
  connectTimeoutMs?: number
}

/** A `pg` pool behind the Db interface. */
export function postgresDb(url: string, opts: PostgresOptions = {}): Db {
  const pool = new pg.Pool({
    connectionString: url,
    max: opts.max ?? 10,
    application_name: opts.applicationName ?? 'wire',
    connectionTimeoutMillis: opts.connectTimeoutMs ?? 3000,
    idleTimeoutMillis: 30_000,
  })
  // @NOTE an idle client's connection error is emitted on the pool; without a listener it crashes the process
  pool.on('error', () => {})
  const query = async <R>(sql: string, params?: unknown[]): Promise<QueryResult<R>> => {
    try {
      const r = await pool.query(sql, params as unknown[])
      return { rows: r.rows as R[], rowCount: r.rowCount ?? 0 }
    } catch (err) {
      throw unavailable(err)
    }
  }
  return {
    kind: 'postgres',
    query,
    async exec(sql) {
      await query(sql)
    },
    async transaction(fn) {
      const client = await pool.connect().catch((err: unknown) => Promise.reject(unavailable(err)))
      let broken: unknown
      // @NOTE a checked-out client's connection error is emitted on the client, not the pool: without
      // a listener a dropped connection mid-transaction crashes the process (the query still rejects)
      const onError = (err: unknown) => (broken = err)
      client.on('error', onError)
      try {
        await client.query('begin')
        const result = await fn({
          query: async <R>(sql: string, params?: unknown[]) => {
            const r = await client.query(sql, params as unknown[])
            return { rows: r.rows as R[], rowCount: r.rowCount ?? 0 }
          },
          exec: async (sql: string) => void (await client.query(sql)),
        })
        await client.query('commit')
        return result
      } catch (err) {
        await client.query('rollback').catch((e: unknown) => (broken = e))
        throw unavailable(err)
      } finally {
        client.off('error', onError)
        client.release(broken instanceof Error ? broken : undefined)
      }
    },
    close: () => pool.end(),
  }
}
