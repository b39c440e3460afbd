import t from 'tap'
import { JOBS, createSweeper } from '../../apps/sweeper/sweeper.js'
import { createLogger } from '../../libs/shared/log/index.js'
import { dropSchema } from '../helpers/services.js'
import { startStack } from '../helpers/stack.js'
import { until } from '../helpers/wait.js'
import { countByType, insertSignals } from './support.js'

t.test('stopping the sweeper mid-purge lets the job finish its batch and complete, then pg-boss stops', async (t) => {
  const s = await startStack(t, { env: { SIGNAL_SWEEP_INTERVAL_SECONDS: '1', SIGNAL_SWEEP_GRACE_SECONDS: '3600' } })
  const db = s.infra.primary
  await insertSignals(db, s.schema, { type: 'gone', count: 20_000, createdSecondsAgo: 2 * 86_400, ttl: 60 })
  // batches of 20: the purge runs for many seconds, so a stop finds it in flight
  const sweeper = await createSweeper(s.cfg, createLogger('sweeper', 'silent'), s.infra, { purgeBatchSize: 20 })
  t.teardown(() => dropSchema(sweeper.bossSchema))
  const boss = `"${sweeper.bossSchema}"`
  const activePurge = async () =>
    (await db.query(`select 1 from ${boss}.job where name = $1 and state = 'active'`, [JOBS.purge])).rowCount > 0
  const inFlight = async () => (await activePurge()) && ((await countByType(db, s.schema)).gone ?? 0) < 20_000
  await until(inFlight, 5000, 'a purge in flight')

  const t0 = Date.now()
  await sweeper.stop()
  t.ok(Date.now() - t0 < 2000, `stopped in ${Date.now() - t0} ms (a batch, not the whole purge)`)
  const left = (await countByType(db, s.schema)).gone ?? 0
  t.ok(left > 0, `${left} rows left for the next run`)
  const jobs = (
    await db.query<{ state: string; expired: number | null; done: boolean | null }>(
      `select state, (output->>'expired')::int as expired, (output->>'done')::bool as done from ${boss}.job where name = $1`,
      [JOBS.purge],
    )
  ).rows
  t.same(
    jobs.filter((j) => j.state !== 'completed'),
    [],
    'every purge job completed: none active, none failed',
  )
  t.ok(
    jobs.some((j) => j.done === false),
    'the interrupted one reports it stopped early',
  )
  t.equal(
    jobs.reduce((n, j) => n + (j.expired ?? 0), 0),
    20_000 - left,
    'its report matches what it deleted',
  )
  // @NOTE an absence: a sweeper still running would purge within its 1 s interval, so wait past it
  await new Promise((r) => setTimeout(r, 1500))
  t.equal((await countByType(db, s.schema)).gone ?? 0, left, 'nothing runs after the stop')
})
