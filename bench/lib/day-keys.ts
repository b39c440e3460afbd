import { randomBytes } from 'node:crypto'
import { type Db, type Ident, idempotencyKeys, type NewSignal, postgresDb } from '../../libs/shared/db/index.js'
import { CLOCK_NOW, clockedUrl, setClock } from './day-clock.js'

// Publishes with an Idempotency-Key (bench/day.ts), as the client library sends one with every
// publish by default: before its signal is stored, each keyed publish looks its key up and reserves
// it (publish/idempotency.ts `publishOnce`: the same two statements, each its own transaction),
// on connections of their own, as many as a writer's pool (10), as it runs them for concurrent requests. The
// reservation's created_at is the database's now(), so these connections run on the simulated
// clock (set again once a simulated minute), and the sweeper deletes the rows 24 simulated hours on.

export interface KeyReservations {
  /** Reserves a key for `share` of the batch's signals, all at once. */
  reserve(batch: readonly NewSignal[]): Promise<void>
  reserved(): number
  pids(): Promise<number[]>
  close(): Promise<void>
}

/**
 * The reservation's insert takes created_at from the column's default, bound to the built-in now()
 * when the table was made: on this scratch board it is the simulated clock's instead.
 */
export async function clockKeys(db: Db, s: Ident): Promise<void> {
  await db.exec(`alter table ${s}.idempotency_keys alter column created_at set default ${CLOCK_NOW}`)
}

export function keyReservations(url: string, s: Ident, share: number, simNow: () => number, connections = 10): KeyReservations {
  const dbs: Db[] = Array.from({ length: connections }, () =>
    postgresDb(clockedUrl(url), { max: 1, applicationName: 'wire-bench-day-keys' }),
  )
  const keys = dbs.map((db) => idempotencyKeys(db, s))
  const setAt = dbs.map(() => -Infinity)
  let next = 0
  let reserved = 0
  let owed = 0 // fractional shares carried from batch to batch, so `share` holds exactly over the run
  async function one(identity: string, id: string) {
    const k = next++ % connections
    const now = simNow()
    if (now - setAt[k]! >= 60_000) (setAt[k] = now), await setClock(dbs[k]!, now)
    const key = randomBytes(16).toString('hex') // the client's own: 32 random hex digits
    if (await keys[k]!.find(identity, key)) throw new Error('a fresh Idempotency-Key was already taken')
    if (!(await keys[k]!.reserve(identity, key, id))) throw new Error('a fresh Idempotency-Key could not be reserved')
    reserved++
  }
  return {
    async reserve(batch) {
      owed += batch.length * share
      const n = Math.min(batch.length, Math.floor(owed))
      owed -= n
      await Promise.all(batch.slice(0, n).map((x) => one(x.origin, x.id)))
    },
    reserved: () => reserved,
    pids: () => Promise.all(dbs.map(async (db) => (await db.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid)),
    close: async () => void (await Promise.all(dbs.map((db) => db.close()))),
  }
}
