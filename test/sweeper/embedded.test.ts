import { Writable } from 'node:stream'
import t from 'tap'
import { startBoard } from '../../apps/server/app.js'
import { JOBS } from '../../apps/sweeper/sweeper.js'
import { loadConfig } from '../../libs/shared/config/index.js'
import { openInfra } from '../../libs/shared/context/index.js'
import { createLogger } from '../../libs/shared/log/index.js'
import { eventually } from '../helpers/wait.js'
import { countByType, directBuckets, insertSignals } from './support.js'

const DAY = 86_400

t.test('the embedded board (PGlite) runs the same sweeper jobs, and stops them before closing the database', async (t) => {
  const cfg = loadConfig({
    WIRE_DATA_DIR: 'memory://',
    WIRE_CONFIG: '/nonexistent/board.json',
    SERVER_ADMIN_TOKEN: 'admin-secret-token',
    SIGNAL_SWEEP_INTERVAL_SECONDS: '1',
    SIGNAL_SWEEP_GRACE_SECONDS: '3600',
    LOG_LEVEL: 'info',
    SHED_EVENT_LOOP_DELAY_MS: '0', // not about shedding: PGlite on a busy machine passes 1 s
  })
  t.equal(cfg.db.kind, 'embedded')
  const logs: string[] = []
  const sink = new Writable({ write: (chunk, _e, cb) => (logs.push(String(chunk)), cb()) })
  const log = createLogger('server', cfg.logLevel, sink)
  const infra = await openInfra(cfg, log, { migrate: true })
  let closed = false
  t.teardown(async () => {
    if (!closed) await infra.close()
  })
  const board = await startBoard(cfg, log, { overrides: { infra } }) // the sweeper is on unless asked otherwise, as in `npm start`
  const { app } = board
  const db = infra.primary
  const schema = cfg.db.schema

  const fresh = await app.inject({
    method: 'POST',
    url: '/sw/signals',
    headers: { authorization: 'Bearer embedded-agent-token' },
    payload: { $type: 'broadcast', text: 'published while the sweeper runs' },
  })
  t.equal(fresh.statusCode, 200)
  // rows inserted already old, and counted in the same transaction: the sweeper runs every second
  // and may purge them the moment it commits
  const history = await db.transaction(async (tx) => {
    await insertSignals(tx, schema, { type: 'gone', count: 2000, createdSecondsAgo: 2 * DAY, spreadSeconds: 3600, ttl: 60, origins: 3 })
    await insertSignals(tx, schema, { type: 'pinned', count: 1, createdSecondsAgo: 3 * DAY, ttl: 60, origins: 1, pinned: true })
    const ids = await tx.query<{ id: string; type: string }>(`select distinct on (type) id, type from "${schema}".signals order by type`)
    return { buckets: await directBuckets(tx, schema, 3600), ids: ids.rows }
  })
  const idOf = (type: string) => history.ids.find((r) => r.type === type)!.id

  t.equal((await app.inject({ url: `/sw/signals/${idOf('gone')}` })).statusCode, 404, 'past the grace: 404 at once')
  const gone = async () => (await countByType(db, schema)).gone === undefined
  t.ok(await eventually(gone, 5000), 'the expired rows go')
  t.same(await countByType(db, schema), { broadcast: 1, pinned: 1 }, 'purged by the pg-boss jobs on PGlite; the pinned one stays')
  t.equal((await app.inject({ url: `/sw/signals/${idOf('pinned')}` })).statusCode, 200)

  const served = (await app.inject({ url: '/sw/stats?bucketSeconds=3600&buckets=120' })).json()
  t.same(
    served.buckets.filter((b: { signals: number }) => b.signals > 0),
    history.buckets,
    'stats after the purge match the count taken before it',
  )
  t.match(served.current, { activeSignals: 2, activeIdentities: 2 })
  const jobs = (await db.query<{ name: string }>(`select distinct name from "${board.sweeper!.bossSchema}".job where state = 'completed'`))
    .rows
  t.same(jobs.map((j) => j.name).sort(), [JOBS.purge, JOBS.stats].sort(), 'both jobs completed through pg-boss')

  await app.close()
  t.match(logs.join(''), /"msg":"sweeper stopped"/, 'app.close() stops the sweeper')
  await infra.close() // PGlite closes after pg-boss let go of it: the test process can exit
  closed = true
})
