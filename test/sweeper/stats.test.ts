import t from 'tap'
import { activeCountsSql, statsWriter } from '../../libs/shared/db/index.js'
import { startStack, type Stack } from '../helpers/stack.js'
import { directBuckets, insertSignals, sweepOnce } from './support.js'

const HOUR = 3600
const DAY = 86_400

/** The non-empty buckets of GET /sw/stats, and a direct count over the same window. */
async function compare(s: Stack, bucketSeconds: number, buckets: number, direct?: Awaited<ReturnType<typeof directBuckets>>) {
  const res = await s.app.inject({ url: `/sw/stats?bucketSeconds=${bucketSeconds}&buckets=${buckets}` })
  if (res.statusCode !== 200) throw new Error(`stats answered ${res.statusCode}`)
  const all = res.json().buckets as Array<{ at: string; signals: number; identities: number }>
  const from = Date.parse(all[0]!.at)
  const expected = (direct ?? (await directBuckets(s.infra.primary, s.schema, bucketSeconds))).filter((b) => Date.parse(b.at) >= from)
  return { served: all.filter((b) => b.signals > 0), expected }
}

t.test('stats buckets match a direct count before and after a purge', async (t) => {
  const s = await startStack(t, { env: { SIGNAL_SWEEP_GRACE_SECONDS: '0' } })
  const db = s.infra.primary
  // 3000 signals over the last 48 h from 7 identities; those older than 24 h are expired and purgeable
  await insertSignals(db, s.schema, { count: 3000, createdSecondsAgo: 30, spreadSeconds: 48 * HOUR, ttl: 60, origins: 7 })
  const before = await directBuckets(db, s.schema, HOUR)
  t.ok(before.length >= 48, `${before.length} hourly buckets to compare`)
  let c = await compare(s, HOUR, 60)
  t.same(c.served, c.expected, 'nothing rolled up yet: all from the signals table')
  t.same(c.expected, before, 'the window holds every row')

  const stats = statsWriter(db, s.infra.schema)
  t.match(await stats.rollUp(1100), { counted: 1100, caughtUp: false })
  c = await compare(s, HOUR, 60)
  t.same(c.served, c.expected, 'part rolled up, part not: each signal counted once')

  const { purge } = await sweepOnce(s)
  t.ok(purge.expired > 1000, `${purge.expired} signals purged`)
  t.ok((await directBuckets(db, s.schema, HOUR)).length < before.length, 'the purge removed whole hours of rows')
  c = await compare(s, HOUR, 60, before)
  t.same(c.served, c.expected, 'after the purge: the same history as the count taken before it')

  const fresh = await s.publish({ $type: 'broadcast', text: 'now' }, 'a-new-identity-token')
  t.equal(fresh.statusCode, 200)
  const last = (await compare(s, HOUR, 60)).served.at(-1)!
  const lastBefore = before.at(-1)!
  // its hour is the last one counted before, or (the clock past the hour meanwhile) the next
  const hourOf = new Date(Math.floor(Date.parse(fresh.json().signal.createdAt) / (HOUR * 1000)) * HOUR * 1000).toISOString()
  t.same(
    last,
    hourOf === lastBefore.at
      ? { at: lastBefore.at, signals: lastBefore.signals + 1, identities: lastBefore.identities + 1 }
      : { at: hourOf, signals: 1, identities: 1 },
    'a fresh publish counts at once',
  )
  c = await compare(s, 300, 12)
  t.ok(c.expected.length >= 10, 'five-minute buckets with activity')
  t.same(c.served, c.expected, 'five-minute buckets agree too')
})

t.test('GET /sw/stats clamps, aligns to the epoch, zero-fills, and ends with the current bucket', async (t) => {
  const s = await startStack(t)
  await insertSignals(s.infra.primary, s.schema, { count: 3, createdSecondsAgo: 0, ttl: 600, origins: 2 })
  const get = async (q: string) => s.app.inject({ url: `/sw/stats${q}` })
  const body = (await get('')).json()
  t.equal(body.bucketSeconds, 60, 'default 60 s')
  t.equal(body.buckets.length, 30, 'default 30 buckets')
  const ats = body.buckets.map((b: { at: string }) => Date.parse(b.at))
  t.ok(
    ats.every((at: number, i: number) => at % 60_000 === 0 && (i === 0 || at - ats[i - 1] === 60_000)),
    'consecutive, epoch-aligned, oldest first',
  )
  const generated = Date.parse(body.generatedAt)
  t.ok(ats.at(-1) <= generated && generated < ats.at(-1) + 60_000, 'the last bucket holds generatedAt (partial)')
  t.same(body.buckets.at(-1), { at: body.buckets.at(-1).at, signals: 3, identities: 2 })
  t.ok(
    body.buckets.slice(0, -1).every((b: { signals: number; identities: number }) => b.signals === 0 && b.identities === 0),
    'zero-filled',
  )
  t.same(body.current, { activeSignals: 3, activeIdentities: 2, recentPollers: 0 })

  const shape = async (q: string) => {
    const b = (await get(q)).json()
    return [b.bucketSeconds, b.buckets.length]
  }
  t.same(await shape('?bucketSeconds=1&buckets=1'), [60, 6], 'clamped up')
  t.same(await shape('?bucketSeconds=999999&buckets=5000'), [3600, 120], 'clamped down')
  t.same(await shape('?bucketSeconds=150&buckets=7'), [120, 7], 'rounded down to whole minutes')
  t.same(await shape('?bucketSeconds=-5'), [60, 30])
  const bad = await get('?bucketSeconds=abc')
  t.equal(bad.statusCode, 400)
  t.equal(bad.json().error.code, 'invalid_request')
  t.equal((await s.app.inject({ url: '/sw/v1/stats?buckets=6' })).json().buckets.length, 6, '/sw/v1 alias')
  t.ok((await s.app.inject({ url: '/.well-known/wire' })).json().features.includes('stats'), 'discovery lists stats')
})

t.test('/sw/wire and /sw/stats active counts stay exact beside many expired, pinned and removed rows', async (t) => {
  const s = await startStack(t)
  const db = s.infra.primary
  await insertSignals(db, s.schema, { count: 20_000, createdSecondsAgo: 2 * DAY, ttl: 60, origins: 50 })
  await insertSignals(db, s.schema, { count: 40, createdSecondsAgo: 10, ttl: HOUR, origins: 4, type: 'live' })
  await insertSignals(db, s.schema, { count: 3, createdSecondsAgo: 3 * DAY, ttl: 60, origins: 1, pinned: true, type: 'pin' })
  await insertSignals(db, s.schema, { count: 5, createdSecondsAgo: 10, ttl: HOUR, origins: 5, removedSecondsAgo: 1, type: 'gone' })
  await db.query(`update "${s.schema}".signals set origin = 'fp_pinned_only' where type = 'pin'`)
  await db.query(`analyze "${s.schema}".signals`)
  const wire = (await s.app.inject({ url: '/sw/wire' })).json().stats
  t.same(wire, { activeSignals: 43, activeIdentities: 5, recentPollers: 0 }, '40 live + 3 pinned, 4 + 1 identities')
  t.match((await s.app.inject({ url: '/sw/stats' })).json().current, { activeSignals: 43, activeIdentities: 5 })
  const plan = (await db.query<{ 'QUERY PLAN': string }>(`explain ${activeCountsSql(s.infra.schema)}`)).rows
    .map((r) => r['QUERY PLAN'])
    .join('\n')
  // signals is partitioned (migrations/0007): the rows are in signals_s0; signals_kept, the default
  // partition, is empty here, and a sequential scan of an empty table is the planner's right choice
  t.match(plan, /Index Only Scan using signals_s0_active_idx/, 'live rows come from the covering index')
  t.notMatch(plan, /Seq Scan on signals_(?!kept )/, 'never a scan of a partition holding rows')
  t.equal((await db.query(`select 1 from "${s.schema}".signals_kept`)).rowCount, 0)
})
