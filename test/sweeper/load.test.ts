import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { purgeExpired } from '../../apps/sweeper/jobs/purge-expired.js'
import { refreshStats } from '../../apps/sweeper/jobs/refresh-stats.js'
import { signalPurger, statsWriter } from '../../libs/shared/db/index.js'
import { createLogger } from '../../libs/shared/log/index.js'
import { startStack, type Stack } from '../helpers/stack.js'
import { until } from '../helpers/wait.js'
import { countByType, insertSignals } from './support.js'

const quiet = createLogger('sweeper', 'silent')
const N = 100_000

/** Publishes and long-poll wake-ups, timed, until `running()` turns false. */
async function measure(s: Stack, running: () => boolean) {
  const publish: number[] = []
  const wake: number[] = []
  const publisher = (async () => {
    while (running()) {
      const t0 = performance.now()
      const res = await s.publish({ $type: 'broadcast', text: 'load' }, 'publisher-token')
      if (res.statusCode !== 200) throw new Error(`publish answered ${res.statusCode}: ${JSON.stringify(res.json())}`)
      publish.push(performance.now() - t0)
      await sleep(20)
    }
  })()
  const poller = (async () => {
    while (running()) {
      const { nextCursor } = await s.read('limit=1')
      let answeredAt = 0
      const poll = s.app.inject({ url: `/sw/signals?cursor=${nextCursor}&type=wake&wait=5` }).then((r) => {
        answeredAt = performance.now()
        return r.json()
      })
      await until(() => s.reader.readSide.feed.waiting === 1, 5000, 'the poll to wait')
      const res = await s.publish({ $type: 'wake', text: 'wake up' }, 'poller-token')
      const ackedAt = performance.now()
      const page = await poll
      if (res.statusCode !== 200 || page.signals.length !== 1) throw new Error('the long-poll missed its signal')
      wake.push(Math.max(0, answeredAt - ackedAt))
    }
  })()
  await Promise.all([publisher, poller])
  const stat = (xs: number[]) => ({
    n: xs.length,
    p50: Math.round([...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0),
    max: Math.round(Math.max(0, ...xs)),
  })
  return { publish: stat(publish), wake: stat(wake) }
}

t.test('a purge of 100 000 expired rows does not stall publishing or long-polls', async (t) => {
  let inserted = 0
  const s = await startStack(t, {
    env: {
      SIGNAL_SWEEP_GRACE_SECONDS: '3600',
      PUBLISH_RATE_LIMIT_MAX: '1000000',
      PUBLISH_ATTEMPT_RATE_LIMIT_MAX: '0',
      PUBLISH_ADDRESS_RATE_LIMIT_MAX: '0',
    },
    // seeded before the board starts, so the reader's tail begins at the head instead of loading 100 000 rows
    seed: async (infra, schema) => {
      const t0 = Date.now()
      await insertSignals(infra.primary, schema, {
        type: 'gone',
        count: N,
        createdSecondsAgo: 2 * 86_400,
        spreadSeconds: 3600,
        ttl: 60,
        origins: 50,
      })
      await infra.primary.query(`analyze "${schema}".signals`)
      inserted = Date.now() - t0
    },
  })
  const db = s.infra.primary
  t.comment(`inserted ${N} expired rows in ${inserted} ms`)
  t.equal(s.reader.readSide.feed.head, N, 'the feed starts at the head')

  const t0 = Date.now()
  const wire = await s.app.inject({ url: '/sw/wire' })
  t.comment(`GET /sw/wire beside ${N} expired rows: ${Date.now() - t0} ms`)
  t.match(wire.json().stats, { activeSignals: 0 })

  const rollup = await refreshStats(statsWriter(db, s.infra.schema), quiet, { batchSize: 20_000, budgetMs: 60_000, pauseMs: 10 })
  t.equal(rollup.counted, N)
  t.comment(`stats rollup of ${N} rows: ${rollup.ms} ms`)

  let idle = true
  setTimeout(() => (idle = false), 3000)
  const baseline = await measure(s, () => idle)
  t.comment(`no purge: publish ms ${JSON.stringify(baseline.publish)}, wake delay ms ${JSON.stringify(baseline.wake)}`)

  let purging = true
  const run = purgeExpired(signalPurger(db, s.infra.schema), quiet, { graceSeconds: 3600, batchSize: 500, budgetMs: 120_000, pauseMs: 10 })
  void run.finally(() => (purging = false))
  const during = await measure(s, () => purging)
  const purge = await run
  t.comment(`purge of ${N}: ${purge.ms} ms in ${purge.batches} batches`)
  t.comment(`during the purge: publish ms ${JSON.stringify(during.publish)}, wake delay ms ${JSON.stringify(during.wake)}`)

  t.match(purge, { expired: N, done: true })
  t.equal((await countByType(db, s.schema)).gone, undefined, 'all gone')
  t.ok(during.publish.n >= 10 && during.wake.n >= 5, 'publishes and long-polls kept running throughout')
  t.ok(during.publish.max < 1000, `longest publish during the purge: ${during.publish.max} ms`)
  t.ok(during.wake.max < 1000, `longest wake delay during the purge: ${during.wake.max} ms`)
})
