import t from 'tap'
import { ident, migrate, pgliteDb, signalPartitions } from '../../libs/shared/db/index.js'
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
