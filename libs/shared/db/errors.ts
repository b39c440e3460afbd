import pg from 'pg'
import { WireError } from '../domain/index.js'

/** Socket-level failures (node's errno codes) and the SQLSTATEs of a server going away or full. */
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EPIPE',
  '57P01',
  '57P02',
  '57P03',
  '53300',
])

const codeOf = (err: unknown): string => {
  const c = (err as { code?: unknown } | null)?.code
  return typeof c === 'string' ? c : ''
}

/**
 * The database is unreachable or the connection broke. `outcomeUnknown`: the statement (or its
 * commit) had been sent, so it may have taken effect; otherwise it surely did not.
 */
export class DatabaseUnavailable extends WireError {
  readonly outcomeUnknown: boolean
  constructor(outcomeUnknown: boolean, cause: unknown) {
    super('unavailable', 'the database is unavailable; try again shortly', undefined, { retryAfter: 1, cause })
    this.outcomeUnknown = outcomeUnknown
  }
}

/** SQLSTATE 57014: the statement ran past statement_timeout (or was cancelled). */
const QUERY_CANCELED = '57014'

/** True when the error says the server is unreachable or going away, not that the statement was wrong. By code and class only. */
export function isConnectionError(err: unknown): boolean {
  if (err instanceof DatabaseUnavailable) return true
  const code = codeOf(err)
  return CONNECTION_CODES.has(code) || code.startsWith('08')
}

/**
 * Classifies what a statement raised. The server's own answer (a pg DatabaseError with a SQLSTATE)
 * means it was refused and nothing took effect, unless its class says the connection is going; any
 * other error from the driver after the statement was sent (terminated socket, closed client) means
 * the outcome is unknown. Programming errors (TypeError, RangeError) pass through.
 */
export function afterSend(err: unknown): unknown {
  if (err instanceof WireError || err instanceof TypeError || err instanceof RangeError) return err
  // a read over its time budget: the client may retry; not a fault, not a reason to leave the replica
  if (err instanceof pg.DatabaseError && err.code === QUERY_CANCELED)
    return new WireError('unavailable', 'the query took too long; try again shortly', undefined, {
      retryAfter: 1,
      overload: true,
      cause: err,
    })
  if (err instanceof pg.DatabaseError) return isConnectionError(err) ? new DatabaseUnavailable(true, err) : err
  return new DatabaseUnavailable(true, err)
}

/** Getting a connection failed: nothing was sent. */
export const beforeSend = (err: unknown) => (err instanceof WireError ? err : new DatabaseUnavailable(false, err))

/**
 * SQLSTATE class 22 (data exception: a NUL byte, a bad encoding, a value out of range) or 23
 * (integrity violation): the rows themselves were refused, so one of them is to blame.
 */
export function isDataError(err: unknown): boolean {
  const code = codeOf(err)
  return code.length === 5 && (code.startsWith('22') || code.startsWith('23'))
}
