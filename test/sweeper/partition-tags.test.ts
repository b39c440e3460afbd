import t from 'tap'
import { ident, migrate, pgliteDb, signalPartitions, signalPurger, signalReader, type Queryable } from '../../libs/shared/db/index.js'
import type { ReadFilter } from '../../libs/shared/domain/index.js'
import { insertSignals } from './support.js'

// Tag rows (signal_tags, migrations/0008) follow their signals: a dropped partition takes its tag
// rows with it, rows carried forward keep theirs, the row purge deletes them with the signal. Run
// on the embedded database; the same SQL runs on PostgreSQL (test/reader/filtered-pages.test.ts).

const DAY = 86_400
const byTag = (tag: string): ReadFilter => ({
  type: null,
  tags: [tag],
  origin: null,
  q: null,
  sinceMs: null,
  includeExpired: true,
  refId: null,
})
/** Gives every signal of `type` the tag `tag`, with its tag row, as the writer would have stored it. */
async function tag(db: Queryable, type: string, name: string) {
  await db.query(
    `with u as (update wire.signals set tags = array[$2::text] where type = $1 returning seq)
    insert into wire.signal_tags (tag, seq) select $2, seq from u`,
    [type, name],
  )
}
const tagRows = async (db: Queryable) =>
  (await db.query<{ tag: string; n: number }>(`select tag, count(*)::int as n from wire.signal_tags group by tag order by tag`)).rows

t.test('a dropped partition drops its tag rows; carried rows keep theirs; the purge deletes a signal with its tag rows', async (t) => {
  const db = await pgliteDb('memory://')
  t.teardown(() => db.close())
  await migrate(db, 'wire')
  const parts = signalPartitions(db, ident('wire'))
  const reader = signalReader(db, ident('wire'), { graceSeconds: 3600 })
  await insertSignals(db, 'wire', { type: 'gone', count: 100, createdSecondsAgo: 2 * DAY, ttl: 60 })
  await insertSignals(db, 'wire', { type: 'pinned', count: 3, createdSecondsAgo: 2 * DAY, ttl: 60, pinned: true })
  await tag(db, 'gone', 'k')
  await tag(db, 'pinned', 'k')
  await db.query(`update wire.feed_head set seq = 999990`)
  await parts.ensure()
  await insertSignals(db, 'wire', { type: 'fresh', count: 20, createdSecondsAgo: 2 * DAY, ttl: 60 }) // straddles the boundary, expired
  await tag(db, 'fresh', 'f')
  await db.query(`update wire.stats_rollup set last_seq = (select seq from wire.feed_head)`)
  t.same(await tagRows(db), [
    { tag: 'f', n: 20 },
    { tag: 'k', n: 103 },
  ])

  t.match(await parts.retire(3600), { dropped: 1, carried: 3 }, 'the pinned rows carried forward')
  t.same(
    await tagRows(db),
    [
      { tag: 'f', n: 10 },
      { tag: 'k', n: 3 },
    ],
    'the dropped rows took their tag rows along; the carried kept theirs',
  )
  t.same(
    (await reader.newest(100, byTag('k'), Date.now())).signals.map((x) => x.type),
    ['pinned', 'pinned', 'pinned'],
    'read by tag from the default partition',
  )
  t.same(
    (await db.query(`select count(*)::int as n from pg_class where relname like 'signal%gone%'`)).rows,
    [{ n: 0 }],
    'the detached tables are gone',
  )

  const purged = await signalPurger(db, ident('wire')).purgeBatch('expired', 3600, 100, null)
  t.equal(purged, 10, 'the purge reports the signals it deleted')
  t.same(await tagRows(db), [{ tag: 'k', n: 3 }], 'and their tag rows went with them')
  t.same((await reader.pageAfter(0, 100, byTag('f'), Date.now())).signals, [])
})
