import { isConnectionError } from './errors.js'
import type { Logger } from '../log/index.js'
import type { Db, QueryOptions, QueryResult } from './types.js'

/**
 * Reads that survive a replica outage (docs/architecture.md "Failure behaviour"): queries go to the
 * replica; when it is unreachable they go to the primary, and the replica is tried again after
 * `retryMs`. Read-only: transactions and exec are not offered.
 */
export function failoverDb(replica: Db, primary: Db, log: Logger, retryMs = 2000): Db {
  let downUntil = 0
  const down = (err: unknown) => isConnectionError(err) // a DatabaseUnavailable, or the connection error itself
  return {
    kind: replica.kind,
    async query<R>(sql: string, params?: unknown[], opts?: QueryOptions): Promise<QueryResult<R>> {
      if (Date.now() >= downUntil) {
        try {
          return await replica.query<R>(sql, params, opts)
        } catch (err) {
          if (!down(err)) throw err
          if (downUntil === 0 || Date.now() >= downUntil) log.warn('replica unreachable: reading from the primary')
          downUntil = Date.now() + retryMs
        }
      }
      return primary.query<R>(sql, params, opts)
    },
    exec: () => Promise.reject(new Error('failoverDb is read-only')),
    transaction: () => Promise.reject(new Error('failoverDb is read-only')),
    close: async () => {},
  }
}
