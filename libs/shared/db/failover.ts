import { reportReplicaHealth } from '../metrics/index.js'
import type { Logger } from '../log/index.js'
import { isConnectionError } from './errors.js'
import type { Db, QueryOptions, QueryResult } from './types.js'

/**
 * Reads that survive a replica outage (docs/architecture.md "Failure behaviour"): queries go to the
 * replica; when it is unreachable (refused, or silent past the read pool's deadline) they go to the
 * primary, and the replica is tried again with a `select 1` every `retryMs`, in the background,
 * until it answers: no read waits on a replica known to be down (a link that died silently would
 * hold each one for a whole deadline). `wire_replica_up` says which, and each switch is logged.
 * Read-only: transactions and exec are not offered.
 */
export function failoverDb(replica: Db, primary: Db, log: Logger, retryMs = 2000): Db {
  let down = false
  let closed = false
  let retry: NodeJS.Timeout | undefined
  const stopReporting = reportReplicaHealth(() => !down)
  const tryAgain = () => {
    retry = setTimeout(() => {
      replica.query('select 1').then(
        () => {
          down = false
          log.info('replica reachable again: reading from it')
        },
        () => void (closed || tryAgain()),
      )
    }, retryMs)
    retry.unref()
  }
  return {
    kind: replica.kind,
    async query<R>(sql: string, params?: unknown[], opts?: QueryOptions): Promise<QueryResult<R>> {
      if (!down) {
        try {
          return await replica.query<R>(sql, params, opts)
        } catch (err) {
          if (!isConnectionError(err)) throw err // a DatabaseUnavailable, or the connection error itself
          if (!down && !closed) {
            down = true
            log.warn({ err: (err as Error).message }, 'replica unreachable: reading from the primary')
            tryAgain()
          }
        }
      }
      return primary.query<R>(sql, params, opts)
    },
    exec: () => Promise.reject(new Error('failoverDb is read-only')),
    transaction: () => Promise.reject(new Error('failoverDb is read-only')),
    close: async () => {
      closed = true
      clearTimeout(retry)
      stopReporting()
    },
  }
}
