import t from 'tap'
import { CARRY_MAX_ROWS, ident, type Queryable, signalPartitions, signalReader } from '../../libs/shared/db/index.js'
import { startStack, type Stack } from '../helpers/stack.js'
import { until } from '../helpers/wait.js'
import { countByType, insertSignals, sweepOnce } from './support.js'

// A closed partition is dropped only when at most CARRY_MAX_ROWS of its rows must stay. These tests
// sit on that limit with the real default: 10,001 rows to keep, then exactly 10,000.

const HOUR = 3600
const DAY = 86_400
const M = 1_000_000

const parts = (s: Stack) => signalPartitions(s.infra.primary, ident(s.schema))
const setHead = (db: Queryable, schema: string, seq: number) => db.query(`update "${schema}".feed_head set seq = $1`, [seq])
const idOf = (seq: number) => `r${String(seq).padStart(19, '0')}` // insertSignals' ids
const idsOf = async (db: Queryable, schema: string, where: string) =>
  (await db.query<{ id: string }>(`select id from "${schema}".signals where ${where} order by seq`)).rows.map((r) => r.id)

/** Follows the feed from `cursor` to the head, expired signals included; every id in order. */
async function follow(s: Stack, cursor: number): Promise<string[]> {
  const seen: string[] = []
  for (;;) {
    const page = (await s.app.inject({ url: `/sw/signals?cursor=${cursor}&limit=100&includeExpired=true` })).json()
    seen.push(...page.signals.map((x: { id: string }) => x.id))
    if (page.nextCursor === cursor) return seen
    cursor = page.nextCursor
  }
}

/**
 * The ids that do not read by id: every one through the by-id query GET /sw/signals/{id} runs
 * (signalReader.byId), a few at a time, and one in 25 through the route itself.
 */
async function unreadable(s: Stack, ids: string[]): Promise<string[]> {
  const reader = signalReader(s.infra.primary, ident(s.schema), { graceSeconds: s.cfg.sweep.graceSeconds })
  const missing: string[] = []
  for (let i = 0; i < ids.length; i += 16) {
    const chunk = ids.slice(i, i + 16)
    const found = await Promise.all(chunk.map(async (id) => (await reader.byId(id))?.id === id))
    missing.push(...chunk.filter((_, j) => !found[j]))
  }
  for (let i = 0; i < ids.length; i += 25) {
    const r = await s.app.inject({ url: `/sw/signals/${ids[i]}` })
    if (r.statusCode !== 200 || r.json().signal.id !== ids[i]) missing.push(`${ids[i]} (route)`)
  }
  return missing
}

t.test(
  'above CARRY_MAX_ROWS a closed partition stays, readable, waiting for its rows to expire (its removed ones purged); at the limit it drops',
  async (t) => {
    // no in-memory tail: every page comes from the database, across the partitions
    const env = { SIGNAL_SWEEP_GRACE_SECONDS: String(HOUR), READ_RATE_LIMIT_MAX: '0', READER_TAIL_SIZE: '0' }
    const s = await startStack(t, { env })
    const db = s.infra.primary
    // the first partition: CARRY_MAX_ROWS + 1 rows to keep among rows that may go
    await insertSignals(db, s.schema, { type: 'gone', count: 700, createdSecondsAgo: 2 * DAY, ttl: 60 })
    await insertSignals(db, s.schema, { type: 'pinned', count: CARRY_MAX_ROWS - 2, createdSecondsAgo: 3 * DAY, ttl: 60, pinned: true })
    await insertSignals(db, s.schema, { type: 'long', count: 3, createdSecondsAgo: 2 * DAY, ttl: 3 * DAY })
    await insertSignals(db, s.schema, {
      type: 'removed',
      count: 2,
      createdSecondsAgo: 2 * DAY,
      ttl: 60,
      pinned: true,
      removedSecondsAgo: 2 * HOUR,
    })
    await setHead(db, s.schema, M)
    await parts(s).ensure() // signals_s1000001
    // a younger closed partition, every row but two purgeable
    await insertSignals(db, s.schema, { type: 'gone2', count: 100, createdSecondsAgo: 2 * DAY, ttl: 60 })
    await insertSignals(db, s.schema, { type: 'pinned2', count: 2, createdSecondsAgo: 2 * DAY, ttl: 60, pinned: true })
    await setHead(db, s.schema, 2 * M)
    await parts(s).ensure() // signals_s2000001, open
    await insertSignals(db, s.schema, { type: 'active', count: 10, createdSecondsAgo: 60, ttl: HOUR })
    t.equal((await s.publish({ $type: 'active', text: 'wakes the reader' })).statusCode, 200)
    t.same(
      (await parts(s).list()).map((p) => p.name),
      ['signals_s0', 'signals_s1000001', 'signals_s2000001'],
    )

    const keptFirst = await idsOf(db, s.schema, `type in ('pinned', 'long')`)
    t.equal(keptFirst.length, CARRY_MAX_ROWS + 1)
    const before = await follow(s, 0)
    t.equal(before.length, CARRY_MAX_ROWS + 1 + 2 + 11, 'the feed shows the rows to keep, none past the grace')

    const first = (await sweepOnce(s, { rollupBatch: 3 * M, purgeBatch: 500 })).purge
    t.match(
      first.partitions,
      { dropped: 1, carried: 2, held: [], waiting: ['signals_s0'] },
      'the younger partition drops; the one above the limit (not by its pinned rows alone) waits',
    )
    t.equal(first.expired, 0, 'the waiting partition’s expired rows are left for its drop: deleting them would give no disk back')
    t.equal(first.removed, 2, 'its removed ones past the grace are purged')
    t.same(
      (await parts(s).list()).map((p) => p.name),
      ['signals_s0', 'signals_s2000001'],
    )
    t.same(
      await countByType(db, s.schema),
      { gone: 700, pinned: CARRY_MAX_ROWS - 2, long: 3, pinned2: 2, active: 11 },
      'nothing to keep lost',
    )
    t.same(await unreadable(s, keptFirst), [], 'every kept row of the waiting partition reads by id')
    t.same(await follow(s, 0), before, 'a follower reads exactly what it read before, across the waiting partition')

    const second = (await sweepOnce(s, { purgeBatch: 500 })).purge
    t.match(
      second,
      { expired: 0, removed: 0, partitions: { dropped: 0, held: [], waiting: ['signals_s0'] } },
      'still above the limit: waiting again, nothing deleted',
    )

    // a moderator unpins one of them, long expired: exactly CARRY_MAX_ROWS are left to keep
    const unpinned = idOf(701)
    const admin = { authorization: 'Bearer admin-secret-token' }
    t.equal((await s.app.inject({ method: 'DELETE', url: `/sw/admin/signals/${unpinned}/pin`, headers: admin })).statusCode, 200)
    await until(
      async () => (await s.read('cursor=700&limit=1&includeExpired=true')).signals[0]?.id !== unpinned,
      5000,
      'the unpin to reach the feed',
    )
    const keptNow = keptFirst.filter((id) => id !== unpinned)
    const third = (await sweepOnce(s, { purgeBatch: 500 })).purge
    t.match(
      third.partitions,
      { dropped: 1, carried: CARRY_MAX_ROWS, held: [], waiting: [] },
      'exactly CARRY_MAX_ROWS to keep: dropped, all carried',
    )
    t.same(
      (await parts(s).list()).map((p) => p.name),
      ['signals_s2000001'],
    )
    t.same(
      await countByType(db, s.schema),
      { pinned: CARRY_MAX_ROWS - 3, long: 3, pinned2: 2, active: 11 },
      'the unpinned one and the expired ones went with the partition',
    )
    const { rows } = await db.query<{ n: number }>(`select count(*)::int as n from "${s.schema}".signals_kept where id = any($1::text[])`, [
      keptNow,
    ])
    t.equal(rows[0]!.n, CARRY_MAX_ROWS, 'every one of them is in the default partition, with its own seq')
    t.same(await unreadable(s, keptNow), [], 'and reads by id')
    t.same(
      await follow(s, 0),
      before.filter((id) => id !== unpinned),
      'a follower reads the same feed',
    )
  },
)
