import pg from 'pg'
import type { Db, QueryResult } from './types.js'

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
    const r = await pool.query(sql, params as unknown[])
    return { rows: r.rows as R[], rowCount: r.rowCount ?? 0 }
  }
  return {
    kind: 'postgres',
    query,
    async exec(sql) {
      await pool.query(sql)
    },
    async transaction(fn) {
      const client = await pool.connect()
      let broken: unknown
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
        throw err
      } finally {
        client.release(broken instanceof Error ? broken : undefined)
      }
    },
    close: () => pool.end(),
  }
}
