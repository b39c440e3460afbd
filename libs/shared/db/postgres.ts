import { createHash } from 'node:crypto'
import pg from 'pg'
import { afterSend, beforeSend, DatabaseUnavailable, isConnectionError } from './errors.js'
import { metrics } from '../metrics/index.js'
import type { Db, QueryOptions, QueryResult } from './types.js'

/** A prepared statement's name: its text's hash, so one text is one statement on every connection. */
const names = new Map<string, string>() // kept for the first 256 texts: callers prepare a fixed few
function statementName(sql: string): string {
  let name = names.get(sql)
  if (name === undefined) {
    name = `w_${createHash('sha1').update(sql).digest('hex').slice(0, 24)}`
    if (names.size < 256) names.set(sql, name)
  }
  return name
}

/**
 * How a connection to PostgreSQL notices that its link died or stalled (the DB_* settings; 0 or
 * unset: not at all). A link that dies silently sends no FIN or RST: an idle connection is found by
 * TCP keepalive, one waiting for an answer only by a deadline.
 */
export interface LinkDeadlines {
  /** Fails a connection attempt after this long, so a down primary answers 503 quickly (default 3000). */
  connectTimeoutMs?: number
  /** TCP keepalive: the first probe after this much idle time, then node's 10 probes a second apart. */
  keepAliveMs?: number
  /** A statement unanswered this long fails (DatabaseUnavailable, outcome unknown) and its connection is dropped. */
  queryTimeoutMs?: number
  /** PostgreSQL's idle_in_transaction_session_timeout: the server ends a session a stalled client left inside a transaction (its locks with it). */
  idleInTransactionMs?: number
}

/** `pg`'s client settings for `d`: for pools, the LISTEN connection and pg-boss alike. */
export function pgDeadlines(d: LinkDeadlines): pg.ClientConfig {
  return {
    connectionTimeoutMillis: d.connectTimeoutMs ?? 3000,
    ...(d.keepAliveMs ? { keepAlive: true, keepAliveInitialDelayMillis: d.keepAliveMs } : {}),
    ...(d.queryTimeoutMs ? { query_timeout: d.queryTimeoutMs } : {}),
    ...(d.idleInTransactionMs ? { idle_in_transaction_session_timeout: d.idleInTransactionMs } : {}),
  }
}

export interface PostgresOptions extends LinkDeadlines {
  max?: number
  applicationName?: string
  /** PostgreSQL's statement_timeout for every statement on this pool (read pools: READ_STATEMENT_TIMEOUT_MS); 0 or unset: none. */
  statementTimeoutMs?: number
}

/** A `pg` pool behind the Db interface. */
export function postgresDb(url: string, opts: PostgresOptions = {}): Db {
  const pool = new pg.Pool({
    connectionString: url,
    max: opts.max ?? 10,
    application_name: opts.applicationName ?? 'wire',
    idleTimeoutMillis: 30_000,
    ...pgDeadlines(opts),
    ...(opts.statementTimeoutMs ? { statement_timeout: opts.statementTimeoutMs } : {}),
  })
  // @NOTE no JIT: Wire's statements are short index probes, but on a big partition the planner's
  // cost estimates without statistics (a fresh partition, never analysed yet) pass jit_above_cost
  // and each read would spend 20-30 ms compiling (bench/storage.ts). Queued before the first query.
  pool.on('connect', (client) => void client.query('set jit = off').catch(() => {}))
  // @NOTE an idle client's connection error is emitted on the pool; without a listener it crashes the process
  pool.on('error', () => {})
  // @NOTE connect and query apart (pool.query does both): a failed connect sent nothing, a
  // connection lost after sending may have committed, and a 503 says which
  const poolName = opts.applicationName ?? 'wire'
  const query = async <R>(sql: string, params?: unknown[], queryOpts?: QueryOptions): Promise<QueryResult<R>> => {
    const done = metrics.dbSeconds.startTimer({ pool: poolName, op: 'query' })
    const client = await pool.connect().catch((err: unknown) => Promise.reject(beforeSend(err)))
    let broken: Error | undefined
    const onError = (err: Error) => (broken = err)
    client.on('error', onError)
    try {
      // text and values apart when unnamed: pg copies a config object given whole, property by property
      const r = await (queryOpts?.prepared
        ? client.query({ text: sql, values: params as unknown[], name: statementName(sql) })
        : client.query(sql, params as unknown[]))
      return { rows: r.rows as R[], rowCount: r.rowCount ?? 0 }
    } catch (err) {
      const e = afterSend(err)
      if (isConnectionError(e)) broken ??= err instanceof Error ? err : new Error('connection lost')
      throw e
    } finally {
      client.off('error', onError)
      client.release(broken)
      done()
    }
  }
  return {
    kind: 'postgres',
    query,
    async exec(sql) {
      await query(sql)
    },
    async transaction(fn) {
      const done = metrics.dbSeconds.startTimer({ pool: poolName, op: 'transaction' })
      const client = await pool.connect().catch((err: unknown) => Promise.reject(beforeSend(err)))
      let broken: unknown
      let committing = false
      // @NOTE a checked-out client's connection error is emitted on the client, not the pool: without
      // a listener a dropped connection mid-transaction crashes the process (the query still rejects)
      const onError = (err: unknown) => (broken = err)
      client.on('error', onError)
      const send = (sql: string, params?: unknown[]) =>
        client.query(sql, params as unknown[]).catch((err: unknown) => Promise.reject(afterSend(err)))
      try {
        await send('begin')
        const result = await fn({
          query: async <R>(sql: string, params?: unknown[]) => {
            const r = await send(sql, params)
            return { rows: r.rows as R[], rowCount: r.rowCount ?? 0 }
          },
          exec: async (sql: string) => void (await send(sql)),
        })
        // the connection broke before the commit went out: the transaction surely rolled back
        if (broken !== undefined) throw new DatabaseUnavailable(false, broken)
        committing = true
        await send('commit')
        return result
      } catch (err) {
        // a connection that broke or stopped answering is dropped, not asked to roll back (that would
        // wait behind the statement still out): the server rolls back when the session ends
        if (err instanceof DatabaseUnavailable) broken ??= err
        else await client.query('rollback').catch((e: unknown) => (broken = e))
        // lost before the commit was sent: the transaction surely rolled back
        throw err instanceof DatabaseUnavailable && err.outcomeUnknown && !committing ? new DatabaseUnavailable(false, err.cause) : err
      } finally {
        client.off('error', onError)
        client.release(broken instanceof Error ? broken : undefined)
        done()
      }
    },
    close: () => pool.end(),
  }
}
