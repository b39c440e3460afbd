import t from 'tap'
import { startStack } from '../helpers/stack.js'
import { countByType, insertSignals, sweepOnce } from './support.js'

const HOUR = 3600
const DAY = 86_400
const grace = { SIGNAL_SWEEP_GRACE_SECONDS: String(HOUR) }

t.test('the purge deletes signals past expiry + grace, never pinned ones, never ones younger than 24 h', async (t) => {
  const s = await startStack(t, { env: grace })
  const db = s.infra.primary
  // gone: expired 2 h ago (grace 1 h), created 2 days ago
  await insertSignals(db, s.schema, { type: 'gone', count: 120, createdSecondsAgo: 2 * DAY, ttl: 2 * DAY - 2 * HOUR })
  // kept: pinned, expired long ago
  await insertSignals(db, s.schema, { type: 'pinned', count: 7, createdSecondsAgo: 3 * DAY, ttl: 60, pinned: true })
  // kept: expired 30 min ago, still inside the grace
  await insertSignals(db, s.schema, { type: 'in-grace', count: 9, createdSecondsAgo: 2 * DAY, ttl: 2 * DAY - HOUR / 2 })
  // kept: past expiry + grace but created 23 h ago (the unverified thread limit still counts it)
  await insertSignals(db, s.schema, { type: 'young', count: 11, createdSecondsAgo: 23 * HOUR, ttl: 60 })
  // gone: removed 2 h ago, pinned or not
  await insertSignals(db, s.schema, {
    type: 'removed-old',
    count: 5,
    createdSecondsAgo: 2 * DAY,
    ttl: DAY * 3,
    removedSecondsAgo: 2 * HOUR,
  })
  await insertSignals(db, s.schema, {
    type: 'removed-old',
    count: 2,
    createdSecondsAgo: 2 * DAY,
    ttl: 60,
    pinned: true,
    removedSecondsAgo: 2 * HOUR,
  })
  // kept: removed 10 min ago
  await insertSignals(db, s.schema, { type: 'removed-new', count: 3, createdSecondsAgo: 2 * DAY, ttl: DAY * 3, removedSecondsAgo: 600 })
  // kept: active
  await insertSignals(db, s.schema, { type: 'active', count: 4, createdSecondsAgo: 60, ttl: HOUR })

  const { purge } = await sweepOnce(s, { purgeBatch: 50 })
  t.match(purge, { expired: 120, removed: 7, done: true }, 'every eligible row, in batches')
  t.ok(purge.batches >= 4, `${purge.batches} batches of at most 50`)
  t.same(await countByType(db, s.schema), { pinned: 7, 'in-grace': 9, young: 11, 'removed-new': 3, active: 4 })
  t.match((await sweepOnce(s)).purge, { expired: 0, removed: 0 }, 'a second sweep finds nothing')
})

t.test('the purge never deletes a signal the stats rollup has not counted', async (t) => {
  const s = await startStack(t, { env: grace })
  const db = s.infra.primary
  await insertSignals(db, s.schema, { type: 'gone', count: 30, createdSecondsAgo: 2 * DAY, ttl: 60 })
  const { signalPurger } = await import('../../libs/shared/db/index.js')
  const purger = signalPurger(db, s.infra.schema)
  t.equal(await purger.purgeBatch('expired', HOUR, 100), 0, 'nothing goes before the rollup')
  const { stats, purge } = await sweepOnce(s)
  t.equal(stats.counted, 30)
  t.equal(purge.expired, 30, 'counted, then purged')
})

t.test('a signal is retrievable by id until its grace ends, then 404, before and after the purge', async (t) => {
  const s = await startStack(t, { env: grace })
  const db = s.infra.primary
  const admin = { authorization: 'Bearer admin-secret-token' }
  const root = (await s.publish({ $type: 'broadcast', text: 'root' })).json().signal
  const reply = (await s.publish({ $type: 'reply', $refId: root.id, text: 're' })).json().signal
  const pinned = (await s.publish({ $type: 'broadcast', text: 'pinned' })).json().signal
  t.equal((await s.app.inject({ method: 'POST', url: `/sw/admin/signals/${pinned.id}/pin`, headers: admin })).statusCode, 200)
  const expireAgo = (seconds: number) =>
    db.query(
      `update "${s.schema}".signals set created_at = now() - interval '3 days', expires_at = now() - $1::int * interval '1 second'`,
      [seconds],
    )
  const get = async (id: string, thread = false) => s.app.inject({ url: `/sw/signals/${id}${thread ? '/thread' : ''}` })

  await expireAgo(HOUR - 60) // expired, one minute of grace left
  const inGrace = await get(root.id)
  t.equal(inGrace.statusCode, 200, 'expired but inside the grace: served by id')
  t.same(
    inGrace.json().replies.map((r: { id: string }) => r.id),
    [reply.id],
  )
  t.equal((await get(root.id, true)).json().signals.length, 2)
  t.equal((await s.publish({ $type: 'reply', $refId: root.id, text: 'late' })).statusCode, 200, 'still a valid $refId')

  await expireAgo(HOUR + 60) // one minute past the grace; not purged yet
  t.equal((await get(root.id)).statusCode, 404, 'past the grace: 404 before any sweep ran')
  t.equal((await get(reply.id)).statusCode, 404)
  t.equal((await get(root.id, true)).statusCode, 404)
  t.equal((await s.publish({ $type: 'reply', $refId: root.id, text: 'too late' })).json().error.code, 'invalid_request')
  t.equal((await get(pinned.id)).statusCode, 200, 'pinned: never swept')

  const { purge } = await sweepOnce(s)
  t.equal(purge.expired, 3, 'root and both replies purged')
  t.equal((await get(root.id)).statusCode, 404, 'and 404 after the purge: the sweep timing never shows')
  t.equal((await get(pinned.id)).statusCode, 200)
})
