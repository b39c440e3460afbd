import t from 'tap'
import { ident, migrate, pgliteDb, postgresDb, signalReader, type Db, type Queryable } from '../../libs/shared/db/index.js'
import { GAP_SCAN_MAX } from '../../libs/shared/db/signals/gaps.js'
import { dropSchema, TEST_DATABASE_URL, uniqueSchema } from '../helpers/services.js'
import { insertSignals } from '../sweeper/support.js'

// SignalReader.keepsAll (db/signals/gaps.ts): whether the board still keeps every signal numbered
// after a cursor, by the retention rule; MCP's events/poll answers its `false` as truncated.

const DAY = 86_400
const HOUR = 3600

const boards: Array<[string, () => Promise<{ db: Db; s: string; done: () => Promise<void> }>]> = [
  [
    'PostgreSQL',
    async () => {
      const s = uniqueSchema()
      const db = postgresDb(TEST_DATABASE_URL, { max: 2 })
      await migrate(TEST_DATABASE_URL, s)
      return { db, s, done: async () => (await db.close(), await dropSchema(s)) }
    },
  ],
  [
    'PGlite',
    async () => {
      const db = await pgliteDb('memory://')
      await migrate(db, 'wire')
      return { db, s: 'wire', done: () => db.close() }
    },
  ],
]

/** The database, counting the statements run through it. */
function counting(db: Queryable) {
  let n = 0
  const q: Queryable = { query: (sql, params, opts) => (n++, db.query(sql, params, opts)) }
  return { db: q, ran: () => n, reset: () => (n = 0) }
}

for (const [name, open] of boards)
  t.test(`${name}: a stretch the board no longer keeps is a gap; one that young is found by one probe`, async (t) => {
    const { db, s, done } = await open()
    t.teardown(done)
    // 1: pinned, three days old; 2–4: expired three days ago (past a one-day grace); 5–6: three days
    // old and still active; 7–9: an hour old
    await insertSignals(db, s, { type: 'anchor', count: 1, createdSecondsAgo: 3 * DAY, ttl: 60, pinned: true })
    await insertSignals(db, s, { type: 'gone', count: 3, createdSecondsAgo: 3 * DAY, ttl: 60 })
    await insertSignals(db, s, { type: 'long', count: 2, createdSecondsAgo: 3 * DAY, ttl: 4 * DAY })
    await insertSignals(db, s, { type: 'young', count: 3, createdSecondsAgo: HOUR, ttl: 60 })
    const rec = counting(db)
    const reader = signalReader(rec.db, ident(s), { graceSeconds: DAY })

    t.equal(await reader.keepsAll(5, 5), true, 'an empty range')
    t.equal(rec.ran(), 0, '…asks nothing')
    t.equal(await reader.keepsAll(7, 9), true, 'after a cursor younger than the grace (less the skew)')
    t.equal(rec.ran(), 1, '…one probe')
    rec.reset()
    t.equal(await reader.keepsAll(1, 9), false, 'over signals past their grace, not purged yet')
    t.equal(rec.ran(), 2, '…the probe, then the count')
    t.equal(await reader.keepsAll(4, 9), true, 'an old cursor past them: everything after it is kept (the count says so)')
    t.equal(await reader.keepsAll(4, 6), true)
    t.equal(await reader.keepsAll(4, 9 + 50), true, "a page cursor beyond this database's head counts only to the head (a replica behind)")

    await db.query(`delete from "${s}".signals where seq = 5`) // a purged row (the one other kind of hole)
    t.equal(await reader.keepsAll(4, 9), false, 'a number with no row is a purged signal')
    t.equal(await reader.keepsAll(5, 9), true, 'and nothing after it is missing')

    await db.query(`update "${s}".signals set expires_at = now() - interval '2 days' where seq = 6`) // long ttl, but now past the grace
    t.equal(await reader.keepsAll(5, 9), false, 'a stored row past its grace')
    await db.query(`update "${s}".signals set removed_at = now() - interval '2 days', expires_at = now() + interval '1 day' where seq = 6`)
    t.equal(await reader.keepsAll(5, 9), false, 'a row removed longer ago than the grace')
    await db.query(`update "${s}".signals set removed_at = now() - interval '1 hour' where seq = 6`)
    t.equal(await reader.keepsAll(5, 9), true, 'a row removed within the grace is still kept')
  })

t.test(`past ${GAP_SCAN_MAX} numbers of an old stretch, a gap is said without counting further`, async (t) => {
  const [, open] = boards[0]!
  const { db, s, done } = await open()
  t.teardown(done)
  await insertSignals(db, s, { type: 'anchor', count: 1, createdSecondsAgo: 3 * DAY, ttl: 60, pinned: true })
  await insertSignals(db, s, { type: 'long', count: GAP_SCAN_MAX + 1, createdSecondsAgo: 2 * DAY, ttl: 4 * DAY })
  const reader = signalReader(db, ident(s), { graceSeconds: DAY })
  t.equal(await reader.keepsAll(1, GAP_SCAN_MAX + 1), true, 'up to the bound: counted, all kept')
  t.equal(await reader.keepsAll(1, GAP_SCAN_MAX + 2), false, 'past it: a possible gap')
})
