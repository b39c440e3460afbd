import { setImmediate as tick } from 'node:timers/promises'
import t from 'tap'
import { ident, type Queryable, signalPartitions } from '../../libs/shared/db/index.js'
import { startStack, type Stack } from '../helpers/stack.js'
import { countByType, insertSignals, sweepOnce } from './support.js'

const HOUR = 3600
const DAY = 86_400
const grace = { SIGNAL_SWEEP_GRACE_SECONDS: String(HOUR) }

const parts = (s: Stack) => signalPartitions(s.infra.primary, ident(s.schema))
const setHead = (db: Queryable, schema: string, seq: number) => db.query(`update "${schema}".feed_head set seq = $1`, [seq])
/** Which partition holds each of these seqs. */
async function homes(db: Queryable, schema: string, seqs: number[]): Promise<string[]> {
  const { rows } = await db.query<{ home: string }>(
    `select tableoid::regclass::text as home from "${schema}".signals where seq = any($1::int8[]) order by seq`,
    [seqs],
  )
  return rows.map((r) => r.home.replace(/^.*\./, ''))
}
/** Publishes; the accepted signal's id and seq (the answer's cursor). */
async function pub(s: Stack, body: Record<string, unknown>): Promise<{ id: string; seq: number }> {
  const r = await s.publish(body)
  if (r.statusCode !== 200) throw new Error(`publish answered ${r.statusCode}`)
  return { id: r.json().signal.id, seq: r.json().cursor }
}
const seqOf = (id: string) => Number(id.slice(1)) // insertSignals' ids: 'r' + the seq
/** Follows the feed from `cursor` to the head; every page's signals in order, and how many requests. */
async function follow(s: Stack, cursor: number) {
  const seen: string[] = []
  let requests = 0
  for (;;) {
    const page = (await s.app.inject({ url: `/sw/signals?cursor=${cursor}&limit=100&includeExpired=true` })).json()
    requests++
    seen.push(...page.signals.map((x: { id: string }) => x.id))
    if (page.nextCursor === cursor) return { seen, requests, cursor }
    cursor = page.nextCursor
  }
}

t.test('the migration turns the table into partitions: the old rows are the first one, plus a default', async (t) => {
  const s = await startStack(t)
  const list = await parts(s).list()
  t.match(list, [{ name: 'signals_s0', lo: null, hi: 1_000_001 }])
  const { rows } = await s.infra.primary.query<{ n: number }>(
    `select count(*)::int as n from pg_inherits where inhparent = to_regclass('"${s.schema}".signals')`,
  )
  t.equal(rows[0]!.n, 2, 'signals_s0 and signals_kept')
})

t.test('the writer makes the next partition ahead of the head; no insert ever fails for want of one', async (t) => {
  const s = await startStack(t)
  const db = s.infra.primary
  await setHead(db, s.schema, 600_000) // past half of the first partition
  t.equal((await s.publish({ $type: 'broadcast', text: 'a' })).statusCode, 200)
  while ((await parts(s).list()).length < 2) await tick() // made off the publish path: wait for it
  const [, next] = await parts(s).list()
  t.match(next, { name: 'signals_s1000001', lo: 1_000_001 }, 'starts where the first ends')
  t.ok(next!.hi - next!.lo! >= 1_000_000, `width ${next!.hi - next!.lo!}`)

  await setHead(db, s.schema, 999_995)
  const seqs: number[] = []
  for (let i = 0; i < 10; i++) seqs.push((await pub(s, { $type: 'broadcast', text: `x${i}` })).seq)
  t.same(
    seqs,
    Array.from({ length: 10 }, (_, i) => 999_996 + i),
  )
  t.same(await homes(db, s.schema, seqs), [...Array(5).fill('signals_s0'), ...Array(5).fill('signals_s1000001')])

  // outrun: rows above the last partition land in the default one; the next partition starts above them
  const last = (await parts(s).list()).at(-1)!
  await setHead(db, s.schema, last.hi + 49)
  await insertSignals(db, s.schema, { count: 5, createdSecondsAgo: 0, ttl: HOUR, type: 'outran' })
  t.same(await homes(db, s.schema, [last.hi + 50, last.hi + 54]), ['signals_kept', 'signals_kept'])
  const made = await parts(s).ensure()
  t.same(made.made, [`signals_s${last.hi + 55}`])
  const after = await pub(s, { $type: 'broadcast', text: 'after' })
  t.same(await homes(db, s.schema, [after.seq]), [`signals_s${last.hi + 55}`])
  t.equal(
    (await s.app.inject({ url: `/sw/signals/r${String(last.hi + 50).padStart(19, '0')}` })).statusCode,
    200,
    'a row in the default partition reads by id',
  )
})

t.test('by id, replies, thread and pages read across a partition boundary', async (t) => {
  const s = await startStack(t)
  const db = s.infra.primary
  await setHead(db, s.schema, 999_998)
  await parts(s).ensure()
  const root = await pub(s, { $type: 'broadcast', text: 'root' }) // 999 999
  const a = await pub(s, { $type: 'reply', $refId: root.id, text: 'a' }) // 1 000 000
  const b = await pub(s, { $type: 'reply', $refId: root.id, text: 'b' }) // next partition
  const c = await pub(s, { $type: 'reply', $refId: b.id, text: 'c' })
  t.same(await homes(db, s.schema, [root.seq, a.seq, b.seq, c.seq]), ['signals_s0', 'signals_s0', 'signals_s1000001', 'signals_s1000001'])

  const one = (await s.app.inject({ url: `/sw/signals/${c.id}` })).json()
  t.equal(one.signal.id, c.id)
  t.same(
    (await s.app.inject({ url: `/sw/signals/${root.id}` })).json().replies.map((x: { id: string }) => x.id),
    [a.id, b.id],
  )
  t.same(
    (await s.app.inject({ url: `/sw/signals/${root.id}/thread` })).json().signals.map((x: { id: string }) => x.id),
    [root.id, a.id, b.id, c.id],
  )
  const page = (await s.app.inject({ url: `/sw/signals?cursor=${root.seq - 1}&limit=3` })).json()
  t.same(
    page.signals.map((x: { id: string }) => x.id),
    [root.id, a.id, b.id],
  )
  t.equal(page.nextCursor, b.seq)
  t.same(
    (await s.app.inject({ url: `/sw/signals?limit=4` })).json().signals.map((x: { id: string }) => x.id),
    [root.id, a.id, b.id, c.id],
    'newest page',
  )
})

t.test('a closed partition is dropped whole: unexpired and pinned rows carried forward, followers keep going', async (t) => {
  const s = await startStack(t, { env: grace })
  const db = s.infra.primary
  await insertSignals(db, s.schema, { type: 'gone', count: 200, createdSecondsAgo: 2 * DAY, ttl: 60 })
  await insertSignals(db, s.schema, { type: 'pinned', count: 3, createdSecondsAgo: 3 * DAY, ttl: 60, pinned: true })
  await insertSignals(db, s.schema, { type: 'long', count: 2, createdSecondsAgo: 2 * DAY, ttl: 3 * DAY })
  await insertSignals(db, s.schema, { type: 'in-grace', count: 4, createdSecondsAgo: 2 * DAY, ttl: 2 * DAY - HOUR / 2 })
  await insertSignals(db, s.schema, {
    type: 'removed',
    count: 2,
    createdSecondsAgo: 2 * DAY,
    ttl: 3 * DAY,
    pinned: true,
    removedSecondsAgo: 2 * HOUR,
  })
  await setHead(db, s.schema, 999_990) // the rest of the first partition (seqs never used: a gap)
  await parts(s).ensure()
  await insertSignals(db, s.schema, { type: 'active', count: 30, createdSecondsAgo: 60, ttl: HOUR }) // 999 991 … 1 000 020
  await pub(s, { $type: 'active', text: 'wakes the reader' }) // rows inserted by SQL above woke nobody
  const cursor = 50 // a follower in the middle of the partition about to go
  const before = await follow(s, cursor)

  const { purge } = await sweepOnce(s, { rollupBatch: 2_000_000 })
  t.match(
    purge.partitions,
    { dropped: 1, carried: 19 },
    '3 pinned, 2 long-lived, 4 in their grace and 10 younger than 24 h carried forward',
  )
  t.ok(purge.partitions.bytes > 0)
  t.same(await countByType(db, s.schema), { pinned: 3, long: 2, 'in-grace': 4, active: 31 }, 'nothing unexpired or pinned lost')
  t.equal((await parts(s).list())[0]!.name, 'signals_s1000001', 'the first partition is gone')
  const pinnedId = `r${String(201).padStart(19, '0')}`
  t.equal((await s.app.inject({ url: `/sw/signals/${pinnedId}` })).statusCode, 200, 'a carried pinned signal reads by id')

  const after = await follow(s, cursor)
  t.same(
    before.seen.slice(0, 10).map(seqOf),
    [201, 202, 203, 204, 205, 206, 207, 208, 209, 999_991],
    'before: the rows past the grace were hidden already',
  )
  t.equal(before.seen.length, 40)
  t.same(after.seen, before.seen, 'the follower sees exactly what it saw before the drop')
  t.equal(after.cursor, before.cursor, 'and reaches the head')
  t.ok(after.requests <= 4, `across the dropped range in ${after.requests} requests`)
  t.match((await sweepOnce(s)).purge.partitions, { dropped: 0, carried: 0 }, 'a second sweep drops nothing')
})

t.test('a partition with rows the rollup has not counted stays; a row younger than 24 h is carried', async (t) => {
  const s = await startStack(t, { env: grace })
  const db = s.infra.primary
  await insertSignals(db, s.schema, { type: 'gone', count: 50, createdSecondsAgo: 2 * DAY, ttl: 60 })
  await setHead(db, s.schema, 1_000_000)
  t.match(await parts(s).retire(HOUR), { dropped: 0 }, 'not rolled up yet')
  await db.query(`update "${s.schema}".stats_rollup set last_seq = 1000000`)
  await insertSignals(db, s.schema, { type: 'young', count: 1, createdSecondsAgo: 60, ttl: 60 }) // in the next partition (default here)
  await db.query(`update "${s.schema}".signals set created_at = now() - interval '1 hour' where seq = 7`)
  t.match(await parts(s).retire(HOUR), { dropped: 1, carried: 1 }, 'a row younger than 24 h is kept (carried), the rest drop')
  t.same(await countByType(db, s.schema), { gone: 1, young: 1 })
})
