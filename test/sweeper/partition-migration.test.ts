import { cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { ident, migrate, postgresDb, signalPartitions, signalReader } from '../../libs/shared/db/index.js'
import { projectPath } from '../../libs/shared/paths.js'
import { dropSchema, TEST_DATABASE_URL, uniqueSchema } from '../helpers/services.js'
import { countByType, insertSignals } from './support.js'

t.test('0007 partitions a board that already holds signals: every row, pin, removal and change kept', async (t) => {
  const schema = uniqueSchema()
  t.teardown(() => dropSchema(schema))
  const db = postgresDb(TEST_DATABASE_URL, { max: 2 })
  t.teardown(() => db.close())
  // the board as the previous release left it: migrations up to 0006
  const before = mkdtempSync(join(tmpdir(), 'wire-migrations-'))
  t.teardown(() => rmSync(before, { recursive: true, force: true }))
  for (const f of readdirSync(projectPath('migrations')).filter((f) => f < '0007'))
    cpSync(join(projectPath('migrations'), f), join(before, f))
  await migrate(TEST_DATABASE_URL, schema, { dir: before })
  await insertSignals(db, schema, { type: 'live', count: 500, createdSecondsAgo: 60, ttl: 3600 })
  await insertSignals(db, schema, { type: 'pinned', count: 2, createdSecondsAgo: 60, ttl: 3600, pinned: true })
  await insertSignals(db, schema, { type: 'removed', count: 3, createdSecondsAgo: 60, ttl: 3600, removedSecondsAgo: 1 })
  await insertSignals(db, schema, { type: 'reply', count: 4, createdSecondsAgo: 30, ttl: 3600, refId: 'r0000000000000000001' })
  await db.query(`update "${schema}".signals set changed = seq where pinned or removed_at is not null`)
  const snapshot = async () => (await db.query(`select * from "${schema}".signals order by seq`)).rows

  const rows = await snapshot()
  const upTo0007 = { until: '0007_partition_signals.sql' } // later migrations are not this test's
  t.same((await migrate(TEST_DATABASE_URL, schema, upTo0007)).applied, ['0007_partition_signals.sql'])
  t.same(await snapshot(), rows, 'every row and column as it was')
  t.same(await countByType(db, schema), { live: 500, pinned: 2, removed: 3, reply: 4 })
  t.match(await signalPartitions(db, ident(schema)).list(), [{ name: 'signals_s0', lo: null, hi: 509 + 1_000_001 }])

  t.same((await migrate(TEST_DATABASE_URL, schema, upTo0007)).applied, [], 'applied once')
  await migrate(TEST_DATABASE_URL, schema) // the later migrations, which today's reads expect
  const reader = signalReader(db, ident(schema), { graceSeconds: 3600 })
  t.equal((await reader.byId('r0000000000000000007'))?.seq, 7, 'by id')
  t.same(
    (await reader.replies('r0000000000000000001')).map((x) => x.seq),
    [506, 507, 508, 509],
    'replies',
  )
  const page = await reader.pageAfter(
    0,
    1000,
    { type: null, tags: [], origin: null, q: null, sinceMs: null, includeExpired: false, refId: null },
    Date.now(),
  )
  t.equal(page.signals.length, 506, 'a page: everything but the removed')
  t.same(
    (await reader.changesSince(0)).map((x) => x.changed),
    [501, 502, 503, 504, 505],
  )
})
