import { randomBytes } from 'node:crypto'
import { type Db, type Ident, idempotencyKeys, type NewSignal, postgresDb } from '../../libs/shared/db/index.js'
import { groupedFind } from '../../libs/shared/publish/index.js'
import { CLOCK_NOW } from './day-clock.js'

// Publishes with an Idempotency-Key (bench/day.ts), as the client library sends one with every
// publish by default: before its signal joins a batch, each keyed publish looks its key up
// (publish/publish.ts: a retry is answered right after auth), through the writer's own grouping
// (publish/idempotency.ts groupedFind: the lookups of one turn in one statement; here a batch's,
// on a connection of their own, the best case of a busy writer); the key itself is stored by the
// batch's statement, with its signal (signals/write.ts insertKeyedBatch). The key's created_at is the database's now(): the writer's
// connection runs on the simulated clock (day-run.ts), and the sweeper deletes the rows 24
// simulated hours on.

export interface KeyLookups {
  /** Gives `share` of the batch's signals a new key, looked up first, all at once; the keys by signal (null: none). */
  lookUp(batch: readonly NewSignal[]): Promise<Array<string | null>>
  keyed(): number
  pids(): Promise<number[]>
  close(): Promise<void>
}

/**
 * The key's insert takes created_at from the column's default, bound to the built-in now()
 * when the table was made: on this scratch board it is the simulated clock's instead.
 */
export async function clockKeys(db: Db, s: Ident): Promise<void> {
  await db.exec(`alter table ${s}.idempotency_keys alter column created_at set default ${CLOCK_NOW}`)
}

export function keyLookups(url: string, s: Ident, share: number): KeyLookups {
  // the lookup compares created_at with the real now(): a key of the simulated past is as absent as a new one
  const db: Db = postgresDb(url, { max: 1, applicationName: 'wire-bench-day-keys' })
  const find = groupedFind(idempotencyKeys(db, s))
  let keyed = 0
  let owed = 0 // fractional shares carried from batch to batch, so `share` holds exactly over the run
  async function one(identity: string) {
    const key = randomBytes(16).toString('hex') // the client's own: 32 random hex digits
    if (await find(identity, key)) throw new Error('a fresh Idempotency-Key was already taken')
    keyed++
    return key
  }
  return {
    async lookUp(batch) {
      owed += batch.length * share
      const n = Math.min(batch.length, Math.floor(owed))
      owed -= n
      const found = await Promise.all(batch.slice(0, n).map((x) => one(x.origin)))
      return batch.map((_, i) => found[i] ?? null)
    },
    keyed: () => keyed,
    pids: async () => [(await db.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid],
    close: () => db.close(),
  }
}
