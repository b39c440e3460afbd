import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import t, { type Test } from 'tap'
import { JOBS } from '../../apps/sweeper/sweeper.js'
import { loadConfig } from '../../libs/shared/config/index.js'
import { bossSchemaName } from '../../libs/shared/db/index.js'
import { openInfra } from '../../libs/shared/context/index.js'
import { createLogger } from '../../libs/shared/log/index.js'
import { startProcess } from '../helpers/process.js'
import { assertServicesUp, dropSchema, TEST_DATABASE_URL, uniqueSchema } from '../helpers/services.js'
import { eventually, until } from '../helpers/wait.js'
import { countByType, insertSignals } from './support.js'

const root = resolve(import.meta.dirname, '../..')
const DAY = 86_400

/**
 * The real role entry in a child process. Under tap it runs apps/sweeper/main.ts through tap's own
 * TypeScript loader (no build needed, nothing stale); elsewhere dist/apps/sweeper/main.js (`npm run build`).
 */
function sweeperCommand(): string[] {
  const loader = process.execArgv.filter((a) => a.includes('@tapjs/typescript'))
  if (loader.length) return [...loader, resolve(root, 'apps/sweeper/main.ts')]
  const built = resolve(root, 'dist/apps/sweeper/main.js')
  if (!existsSync(built)) throw new Error('run `npm run build` first')
  return [built]
}

const spawnSweeper = (t: Test, env: Record<string, string>) =>
  startProcess(t, process.execPath, sweeperCommand(), env, /"msg":"listening"/, 60_000)

/** `expired` summed over a process's 'purged expired signals' log lines. */
const loggedPurges = (output: string) =>
  output
    .split('\n')
    .filter((l) => l.includes('"msg":"purged expired signals"'))
    .reduce((n, l) => n + (JSON.parse(l) as { expired: number }).expired, 0)

t.test('two sweeper processes purge each expired row exactly once, one job per interval', async (t) => {
  await assertServicesUp()
  const schema = uniqueSchema('sw')
  const boss = `"${bossSchemaName(schema)}"`
  const cfg = loadConfig({ DATABASE_URL: TEST_DATABASE_URL, WIRE_PG_SCHEMA: schema, WIRE_CONFIG: '/nonexistent.json' })
  const infra = await openInfra(cfg, createLogger('sweeper', 'silent'), { migrate: true })
  t.teardown(async () => {
    await infra.close()
    await dropSchema(schema) // and its pg-boss schema
  })
  const db = infra.primary
  await insertSignals(db, schema, { type: 'gone', count: 30_000, createdSecondsAgo: 2 * DAY, ttl: 60, origins: 20 })
  await insertSignals(db, schema, { type: 'pinned', count: 25, createdSecondsAgo: 3 * DAY, ttl: 60, pinned: true })
  await insertSignals(db, schema, { type: 'active', count: 10, createdSecondsAgo: 5, ttl: 3600 })

  const env = {
    PATH: process.env.PATH ?? '',
    TS_NODE_TRANSPILE_ONLY: '1',
    DATABASE_URL: TEST_DATABASE_URL,
    WIRE_PG_SCHEMA: schema,
    SIGNAL_SWEEP_INTERVAL_SECONDS: '1',
    SIGNAL_SWEEP_GRACE_SECONDS: '3600',
    SERVER_HOST: '127.0.0.1',
    SERVER_PORT: '0',
    LOG_LEVEL: 'info',
  }
  // started together, so both install pg-boss and create its queues for the first time at once
  const [a, b] = await Promise.all([spawnSweeper(t, env), spawnSweeper(t, env)])

  t.ok(await eventually(async () => (await countByType(db, schema)).gone === undefined, 5000), 'every expired row purged')
  t.same(await countByType(db, schema), { pinned: 25, active: 10 }, 'pinned and active rows survive')
  // a few more one-second slots, with both sweepers offering every job in each of them
  const purgesDone = async () =>
    Number((await db.query(`select count(*) from ${boss}.job where name = $1 and state = 'completed'`, [JOBS.purge])).rows[0]!.count)
  await until(async () => (await purgesDone()) >= 4, 15_000, 'four purge slots completed')

  const jobs = (
    await db.query<{ name: string; state: string; slot: Date; expired: number | null }>(
      `select name, state, singleton_on as slot, (output->>'expired')::int as expired from ${boss}.job where name like 'wire.%'`,
    )
  ).rows
  const purges = jobs.filter((j) => j.name === JOBS.purge)
  t.ok(purges.length >= 3 && jobs.some((j) => j.name === JOBS.stats), `${purges.length} purge jobs ran`)
  const perSlot = new Map<string, number>()
  for (const j of jobs) perSlot.set(`${j.name} ${j.slot.toISOString()}`, (perSlot.get(`${j.name} ${j.slot.toISOString()}`) ?? 0) + 1)
  t.same(
    [...perSlot].filter(([, n]) => n > 1),
    [],
    'never two jobs of a queue in one slot, though both sweepers offered each',
  )
  t.equal(
    purges.reduce((n, j) => n + (j.expired ?? 0), 0),
    30_000,
    'the purge jobs deleted 30 000 rows between them: each once',
  )
  t.equal(loggedPurges(a.output()) + loggedPurges(b.output()), 30_000, 'and the two processes logged 30 000 between them')
  t.comment(`purged by process A: ${loggedPurges(a.output())}, by process B: ${loggedPurges(b.output())}`)
  t.notMatch(a.output() + b.output(), /"level":50/, 'no errors logged (the first-start queue deadlock is retried)')

  const t0 = Date.now()
  a.signal('SIGTERM')
  b.signal('SIGTERM')
  t.same(
    (await Promise.all([a.exited, b.exited])).map((e) => e.code),
    [0, 0],
    'both exit 0 on SIGTERM',
  )
  t.ok(Date.now() - t0 < 5000, `stopped in ${Date.now() - t0} ms`)
  t.match(a.output(), /"msg":"sweeper stopped"/)
  const active = await db.query(`select 1 from ${boss}.job where state = 'active'`)
  t.equal(active.rowCount, 0, 'no job left active: in-flight ones finished before pg-boss stopped')
})
