import { createHash } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import type { PGlite } from '@electric-sql/pglite'
import type { ConstructorOptions, Db as BossDatabase, PgBoss, SendOptions } from 'pg-boss'
import type { Logger } from '../log/index.js'
import { pgDeadlines, type LinkDeadlines } from './postgres.js'
import type { Db } from './types.js'

/** Where pg-boss keeps its tables: a schema of its own beside the board's, never in migrations/. */
export function bossSchemaName(schema: string): string {
  const name = `${schema}_boss`
  if (name.length <= 63) return name
  // identifiers stop at 63 bytes: keep a readable prefix and make the rest unique to the board's schema
  const hash = createHash('sha256').update(schema).digest('hex').slice(0, 8)
  return `${schema.slice(0, 63 - '_boss'.length - 9)}_${hash}_boss`
}

/**
 * How pg-boss reaches the database. PostgreSQL: a small pool of its own (its LISTEN and transaction
 * support need pg's pool), named `pool.applicationName`, with the connections' keepalive and
 * deadlines (`links`: DB_*) but the query's. Embedded: the process's one PGlite, through
 * pgliteBossDatabase.
 */
export function bossConnection(
  primary: Db,
  url: string | undefined,
  links: LinkDeadlines = {},
  pool = { applicationName: 'wire-sweeper', max: 3 },
): ConstructorOptions {
  const pglite = (primary as Partial<{ pglite: PGlite }>).pglite
  if (primary.kind === 'embedded' && pglite) return { db: pgliteBossDatabase(pglite), backend: 'pglite', reindex: false }
  if (!url) throw new Error('pg-boss on PostgreSQL needs the database URL')
  // no query deadline: pg-boss's own migrations may run long, and its work waits on nobody (a
  // statement on a dead link ends when TCP gives up); its idle connections are still probed
  return { ...pgDeadlines({ ...links, queryTimeoutMs: 0 }), connectionString: url, max: pool.max, application_name: pool.applicationName }
}

/**
 * pg-boss's IDatabase over PGlite. Statements with parameters are single statements (extended
 * protocol); parameterless text may hold several, which only `exec` runs.
 */
function pgliteBossDatabase(pglite: PGlite): BossDatabase {
  return {
    async executeSql(text: string, values?: unknown[]) {
      if (values?.length) return { rows: (await pglite.query(text, values)).rows }
      // @NOTE pg-boss sends its locked sections as one text `BEGIN; …; COMMIT`. PGlite is a single
      // session shared with the writer and reader: if such a text failed halfway, the session would
      // stay in an aborted transaction until someone rolled it back, and a publish queued meanwhile
      // would fail. transaction() holds the session for the whole text and rolls back before letting
      // anything else in (the inner BEGIN and the outer COMMIT are harmless warnings).
      const results = /^\s*begin\b/i.test(text) ? await pglite.transaction((tx) => tx.exec(text)) : await pglite.exec(text)
      // a RETURNING in the middle of the text must not be lost behind the trailing COMMIT
      return { rows: results.flatMap((r) => r.rows) }
    },
  }
}

/** Creates a queue (a no-op when it exists), retrying the first-start deadlock two processes can hit. */
export async function createBossQueue(boss: PgBoss, name: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await boss.createQueue(name)
    } catch (err) {
      // @NOTE pg-boss 12: two processes creating the same queue for the first time at once can hit
      // `deadlock detected` (SQLSTATE 40P01); the loser's transaction rolled back, so trying again is safe
      if ((err as { code?: unknown }).code !== '40P01' || attempt >= 5) throw err
      await sleep(50 * attempt + Math.random() * 100)
    }
  }
}

/**
 * Offers each queue's job (`workIds`: queue → its worker) for the current slot of `intervalSeconds`
 * a few times per interval: the sweeper's jobs, the aggregator's recheck. The process whose offer
 * creates the slot's job runs it at once; the others' offers in that slot come back null.
 */
export function offerEverySlot(
  boss: PgBoss,
  workIds: ReadonlyMap<string, string>,
  o: { key: string; intervalSeconds: number; expireInSeconds?: number },
  stopping: AbortSignal,
  log: Logger,
) {
  const interval = o.intervalSeconds
  // @NOTE one job per queue per slot of `interval` seconds, however many processes offer it: pg-boss
  // keeps (name, singleton slot, key) unique among jobs not cancelled, and a job row outlives its
  // slot (deleteAfterSeconds), so a second send in the same slot returns null (pg-boss 12.35; test/sweeper/two-sweepers.test.ts).
  const slot: SendOptions = {
    singletonKey: o.key,
    singletonSeconds: interval,
    retryLimit: 0, // the next slot is the retry
    ...(o.expireInSeconds !== undefined && { expireInSeconds: o.expireInSeconds }),
    retentionSeconds: Math.max(60, interval * 3), // a slot nobody picked up is stale a few slots later
    deleteAfterSeconds: Math.max(3600, interval * 2),
  }
  const offer = async () => {
    for (const [name, workId] of workIds) {
      if (stopping.aborted) return
      if (await boss.send(name, {}, slot)) boss.notifyWorker(workId) // ours: run it now, not at the next poll
    }
  }
  let offering: Promise<void> = Promise.resolve()
  const tick = () => {
    offering = offering.then(offer).catch((err: unknown) => log.warn({ err }, `${o.key} not offered; trying again next tick`))
  }
  // several offers per slot, so a slot is taken promptly whichever process's timer fires first
  const timer = setInterval(tick, Math.min(15_000, Math.max(500, (interval * 1000) / 3)))
  tick()
  return {
    async stop() {
      clearInterval(timer)
      await offering
    },
  }
}
