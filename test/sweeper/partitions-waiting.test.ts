import t, { type Test } from 'tap'
import { purgeExpired } from '../../apps/sweeper/jobs/purge-expired.js'
import { ident, migrate, postgresDb, signalPartitions, signalPurger, type Db } from '../../libs/shared/db/index.js'
import { survivorsSql } from '../../libs/shared/db/signals/partition-drop.js'
import { createLogger } from '../../libs/shared/log/index.js'
import { dropSchema, TEST_DATABASE_URL, uniqueSchema } from '../helpers/services.js'
import { countByType, insertSignals } from './support.js'

// What bench/day.ts found at scale (a 6 h partition at 5,000/s is 108 M rows, the carry limit
// 10,000): every closed partition has more rows to keep than a drop carries until its last rows
// expire. Such a partition waits for them; the row purge leaves its expired rows alone (deleting
// them gives no disk back) and only a partition held by too many *pinned* rows, which would never
// drop, is purged row by row. And the question "more than the limit to keep?" reads a bounded
// number of index entries, however many rows the partition keeps. A carry limit of 5 stands for
// 10,000 here (`retire`'s and the job's own parameter).

const HOUR = 3600
const DAY = 86_400
const M = 1_000_000
const CARRY = 5
const quiet = createLogger('sweeper', 'silent')

async function board(t: Test): Promise<{ db: Db; schema: string }> {
  const schema = uniqueSchema('waiting')
  await migrate(TEST_DATABASE_URL, schema)
  const db = postgresDb(TEST_DATABASE_URL, { max: 2 })
  t.teardown(async () => (await db.close(), await dropSchema(schema)))
  return { db, schema }
}

/** Closes the first partition (rows already in it), opens the next, and lets the rollup count them. */
async function close(db: Db, schema: string) {
  await db.query(`update "${schema}".feed_head set seq = $1`, [M])
  await signalPartitions(db, ident(schema)).ensure()
  await db.query(`update "${schema}".stats_rollup set last_seq = (select seq from "${schema}".feed_head)`)
}

const sweep = (db: Db, schema: string) =>
  purgeExpired(signalPurger(db, ident(schema)), quiet, {
    graceSeconds: HOUR,
    batchSize: 100,
    budgetMs: 60_000,
    pauseMs: 0,
    carryMax: CARRY,
  })

t.test('a closed partition whose rows to keep will expire waits for them: no row purge of its expired rows, then one drop', async (t) => {
  const { db, schema } = await board(t)
  await insertSignals(db, schema, { type: 'gone', count: 200, createdSecondsAgo: 2 * DAY, ttl: 60 })
  await insertSignals(db, schema, { type: 'long', count: 20, createdSecondsAgo: 2 * DAY, ttl: 2 * DAY }) // expire in an hour's time
  await insertSignals(db, schema, { type: 'pinned', count: CARRY, createdSecondsAgo: 3 * DAY, ttl: 60, pinned: true })
  await insertSignals(db, schema, { type: 'removed', count: 3, createdSecondsAgo: 2 * DAY, ttl: 2 * DAY, removedSecondsAgo: 2 * HOUR })
  await close(db, schema)

  const first = await sweep(db, schema)
  t.match(
    first,
    { expired: 0, removed: 3, partitions: { dropped: 0, held: [], waiting: ['signals_s0'] } },
    'waiting: its expired rows stay for the drop, its removed ones past the grace go',
  )
  t.same(await countByType(db, schema), { gone: 200, long: 20, pinned: CARRY })

  // an hour and a half later the long ones have expired, past the grace too: the partition drops whole
  await db.query(
    `update "${schema}".signals set created_at = created_at - interval '150 minutes', expires_at = expires_at - interval '150 minutes' where type = 'long'`,
  )
  const second = await sweep(db, schema)
  t.match(second, { expired: 0, partitions: { dropped: 1, carried: CARRY, held: [], waiting: [] } }, 'dropped, its pinned rows carried')
  t.same(await countByType(db, schema), { pinned: CARRY }, 'the expired rows went with it')
})

t.test('a closed partition held by more pinned rows than a drop carries is purged row by row, as before', async (t) => {
  const { db, schema } = await board(t)
  await insertSignals(db, schema, { type: 'gone', count: 200, createdSecondsAgo: 2 * DAY, ttl: 60 })
  await insertSignals(db, schema, { type: 'pinned', count: CARRY + 1, createdSecondsAgo: 3 * DAY, ttl: 60, pinned: true })
  await close(db, schema)
  const run = await sweep(db, schema)
  t.match(run, { expired: 200, partitions: { dropped: 0, held: ['signals_s0'], waiting: [] } }, 'held; its expired rows deleted row by row')
  t.same(await countByType(db, schema), { pinned: CARRY + 1 })
})

t.test('counting the rows a partition must keep stops at the limit, however many it keeps', async (t) => {
  const { db, schema } = await board(t)
  // 20,000 rows younger than the 24 h floor, all unexpired, 2,000 of them pinned: every one must stay
  await insertSignals(db, schema, { type: 'young', count: 18_000, createdSecondsAgo: 60, spreadSeconds: HOUR, ttl: DAY })
  await insertSignals(db, schema, { type: 'pinned', count: 2000, createdSecondsAgo: 60, ttl: DAY, pinned: true })
  await db.exec(`analyze "${schema}".signals_s0`)
  const sql = survivorsSql(`"${schema}".signals_s0`, CARRY)
  const counts = (await db.query<{ kept: number; pinned: number }>(sql, [HOUR])).rows[0]!
  t.ok(
    counts.kept > CARRY && counts.kept <= 3 * (CARRY + 1),
    `to keep: ${counts.kept}, "more than ${CARRY}" (each of its three scans stopped at ${CARRY + 1})`,
  )
  t.equal(counts.pinned, CARRY + 1, 'pinned: more than the limit')
  // as retire asks it: index scans only
  const plan = await db.transaction(async (tx) => {
    await tx.exec(`set local enable_seqscan = off`)
    return (await tx.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(`explain (analyze, format json) ${sql}`, [HOUR])).rows[0]![
      'QUERY PLAN'
    ][0]!.Plan
  })
  const scanned = scans(plan)
  t.ok(scanned.length >= 4, `the plan scans (${scanned.map((x) => x.node).join(', ')})`)
  const rows = scanned.reduce((a, x) => a + x.rows, 0)
  t.ok(rows <= 4 * (CARRY + 1), `the scans returned ${rows} rows in all, at most ${4 * (CARRY + 1)}, of 20,000 to keep`)
})

interface PlanNode {
  'Node Type': string
  'Actual Rows': number
  'Actual Loops': number
  Plans?: PlanNode[]
}

/** Every scan of a table or an index in a plan, with the rows it returned. */
function scans(p: PlanNode): Array<{ node: string; rows: number }> {
  const own =
    / Scan$/.test(p['Node Type']) && !/Subquery|Function|Values/.test(p['Node Type'])
      ? [{ node: p['Node Type'], rows: p['Actual Rows'] * p['Actual Loops'] }]
      : []
  return [...own, ...(p.Plans ?? []).flatMap(scans)]
}
