import t, { type Test } from 'tap'
import pg from 'pg'
import { linkProxy, pgQuery } from '../../bench/lib/drill/proxy.js'
import { DatabaseUnavailable, postgresDb } from '../../libs/shared/db/index.js'
import { dropSchema, TEST_DATABASE_URL, uniqueSchema } from '../helpers/services.js'

// A link to PostgreSQL that stalls (no FIN, no RST: the peers' kernels keep acknowledging, so no
// keepalive finds it) is found by the pool's deadlines (DB_QUERY_TIMEOUT_MS,
// DB_IDLE_IN_TRANSACTION_TIMEOUT_MS), as the network drills found it was not
// (docs/operations.md "The network drills"). The stall is a proxy that stops forwarding.

const HUNG = 20_000 // far past every deadline here: an answer later than this is a hang
async function withinHung<T>(p: Promise<T>): Promise<{ v: T } | { err: unknown } | 'hung'> {
  let timer: NodeJS.Timeout | undefined
  const hung = new Promise<'hung'>((r) => (timer = setTimeout(() => r('hung'), HUNG)))
  return Promise.race([
    p.then(
      (v) => ({ v }),
      (err: unknown) => ({ err }),
    ),
    hung,
  ]).finally(() => clearTimeout(timer))
}

async function stalledPool(t: Test, o: { queryTimeoutMs?: number; idleInTransactionMs?: number }) {
  const target = new URL(TEST_DATABASE_URL)
  const proxy = await linkProxy('127.0.0.1', { host: target.hostname, port: Number(target.port || 5432) })
  t.teardown(() => proxy.close())
  const url = new URL(TEST_DATABASE_URL)
  url.port = String(proxy.port)
  const db = postgresDb(url.toString(), { ...o, max: 2, applicationName: 'wire-link-test' })
  t.teardown(() => db.close())
  return { proxy, db }
}

t.test('a statement on a stalled link fails at its deadline, outcome unknown, and the next one gets a new connection', async (t) => {
  const { proxy, db } = await stalledPool(t, { queryTimeoutMs: 500 })
  t.same((await db.query('select 1 as one')).rows, [{ one: 1 }])
  proxy.stall()
  const r = await withinHung(db.query('select 2'))
  t.not(r, 'hung', 'the statement is not left waiting for the link')
  const err = r !== 'hung' && 'err' in r ? r.err : null
  t.ok(err instanceof DatabaseUnavailable, 'it fails as the database being unavailable (503)')
  t.equal((err as DatabaseUnavailable).outcomeUnknown, true, 'sent, so its outcome is unknown')
  proxy.pass()
  t.same((await db.query('select 3 as three')).rows, [{ three: 3 }], 'the link back, the pool serves again')
})

t.test('a transaction stalled at its commit gives its locks back: PostgreSQL ends the session', async (t) => {
  const schema = uniqueSchema('linkdl')
  t.teardown(() => dropSchema(schema))
  const direct = new pg.Client({ connectionString: TEST_DATABASE_URL })
  await direct.connect()
  t.teardown(() => direct.end())
  await direct.query(
    `create schema "${schema}"; create table "${schema}".head (id int primary key, v int); insert into "${schema}".head values (1, 0)`,
  )
  const { proxy, db } = await stalledPool(t, { queryTimeoutMs: 1000, idleInTransactionMs: 500 })
  proxy.stallAt(pgQuery('commit'))
  // the row lock is taken, then the link stalls as the commit is sent (the writer's thread transaction)
  const stalled = withinHung(db.transaction((tx) => tx.query(`update "${schema}".head set v = 1 where id = 1`)))
  const other = await withinHung(direct.query(`update "${schema}".head set v = 2 where id = 1`))
  t.not(other, 'hung', 'another session takes the lock once PostgreSQL has ended the stalled one')
  const r = await stalled
  t.not(r, 'hung', 'the stalled transaction is answered')
  t.ok(
    r !== 'hung' && 'err' in r && r.err instanceof DatabaseUnavailable && r.err.outcomeUnknown,
    'as unavailable, outcome unknown (its commit was sent)',
  )
  proxy.pass() // the held commit reaches a session that is gone
  t.same(
    (await direct.query(`select v from "${schema}".head`)).rows,
    [{ v: 2 }],
    'the stalled transaction rolled back; the other committed',
  )
})
