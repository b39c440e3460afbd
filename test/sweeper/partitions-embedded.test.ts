import t from 'tap'
import { purgeExpired } from '../../apps/sweeper/jobs/purge-expired.js'
import { CARRY_MAX_ROWS, ident, migrate, pgliteDb, signalPartitions, signalPurger } from '../../libs/shared/db/index.js'
import { createLogger } from '../../libs/shared/log/index.js'
import { countByType, insertSignals } from './support.js'

const DAY = 86_400

t.test('the embedded database (PGlite) partitions signals the same way: made ahead, dropped whole', async (t) => {
  const db = await pgliteDb('memory://')
  t.teardown(() => db.close())
  await migrate(db, 'wire')
  const parts = signalPartitions(db, ident('wire'))
  t.match(await parts.list(), [{ name: 'signals_s0', lo: null, hi: 1_000_001 }])

  await insertSignals(db, 'wire', { type: 'gone', count: 100, createdSecondsAgo: 2 * DAY, ttl: 60 })
  await insertSignals(db, 'wire', { type: 'pinned', count: 2, createdSecondsAgo: 2 * DAY, ttl: 60, pinned: true })
  await db.query(`update wire.feed_head set seq = 999990`)
  t.same((await parts.ensure()).made, ['signals_s1000001'], 'the next partition, ahead of the head')
  await insertSignals(db, 'wire', { type: 'fresh', count: 20, createdSecondsAgo: 2 * DAY, ttl: 2 * DAY }) // straddles the boundary
  await db.query(`update wire.stats_rollup set last_seq = (select seq from wire.feed_head)`)

  t.match(await parts.retire(3600), { dropped: 1, carried: 12 }, 'pinned and unexpired rows carried forward')
  t.same(await countByType(db, 'wire'), { pinned: 2, fresh: 20 })
  t.match(await parts.list(), [{ name: 'signals_s1000001' }])
})

t.test('on PGlite too, a partition with more than CARRY_MAX_ROWS rows to keep is held and row-purged; a younger one drops', async (t) => {
  const db = await pgliteDb('memory://')
  t.teardown(() => db.close())
  await migrate(db, 'wire')
  const parts = signalPartitions(db, ident('wire'))
  await insertSignals(db, 'wire', { type: 'gone', count: 300, createdSecondsAgo: 2 * DAY, ttl: 60 })
  await insertSignals(db, 'wire', { type: 'pinned', count: CARRY_MAX_ROWS + 1, createdSecondsAgo: 3 * DAY, ttl: 60, pinned: true })
  await db.query(`update wire.feed_head set seq = 1000000`)
  await parts.ensure()
  await insertSignals(db, 'wire', { type: 'gone2', count: 50, createdSecondsAgo: 2 * DAY, ttl: 60 })
  await db.query(`update wire.feed_head set seq = 2000000`)
  await parts.ensure()
  await insertSignals(db, 'wire', { type: 'fresh', count: 5, createdSecondsAgo: 60, ttl: 3600 })
  await db.query(`update wire.stats_rollup set last_seq = (select seq from wire.feed_head)`)

  const o = { graceSeconds: 3600, batchSize: 200, budgetMs: 60_000, pauseMs: 0 }
  const run = await purgeExpired(signalPurger(db, ident('wire')), createLogger('sweeper', 'silent'), o)
  t.match(run, { expired: 300, partitions: { dropped: 1, carried: 0, held: ['signals_s0'] } }, 'held; its expired rows deleted row by row')
  t.same(await countByType(db, 'wire'), { pinned: CARRY_MAX_ROWS + 1, fresh: 5 })
  t.same(
    (await parts.list()).map((p) => p.name),
    ['signals_s0', 'signals_s2000001'],
  )

  t.match(
    await parts.retire(3600, CARRY_MAX_ROWS + 1),
    { dropped: 1, carried: CARRY_MAX_ROWS + 1, held: [] },
    'at a limit it meets exactly: dropped, all carried',
  )
  t.same(await countByType(db, 'wire'), { pinned: CARRY_MAX_ROWS + 1, fresh: 5 })
  const { rows } = await db.query<{ n: number }>(`select count(*)::int as n from wire.signals_kept where type = 'pinned'`)
  t.equal(rows[0]!.n, CARRY_MAX_ROWS + 1)
})
