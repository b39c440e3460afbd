import t, { type Test } from 'tap'
import { linkProxy } from '../../bench/lib/drill/proxy.js'
import { failoverDb, postgresDb } from '../../libs/shared/db/index.js'
import { createLogger } from '../../libs/shared/log/index.js'
import { registry } from '../../libs/shared/metrics/index.js'
import { TEST_DATABASE_URL } from '../helpers/services.js'
import { until } from '../helpers/wait.js'

// A reader's replica whose link stalls: the first read waits out the read pool's deadline and goes
// to the primary; after that no read waits on the replica (before, every read after the retry
// interval tried it again and waited a whole deadline); a `select 1` in the background brings reads
// back once it answers (the network drills, docs/operations.md).

async function pools(t: Test, retryMs: number) {
  const target = new URL(TEST_DATABASE_URL)
  const link = await linkProxy('127.0.0.1', { host: target.hostname, port: Number(target.port || 5432) })
  t.teardown(() => link.close())
  const viaLink = new URL(TEST_DATABASE_URL)
  viaLink.port = String(link.port)
  const replica = postgresDb(viaLink.toString(), { queryTimeoutMs: 300, applicationName: 'wire-test-replica', max: 2 })
  const primary = postgresDb(TEST_DATABASE_URL, { applicationName: 'wire-test-primary', max: 2 })
  const reads = failoverDb(replica, primary, createLogger('reader', 'silent'), retryMs)
  t.teardown(async () => (await reads.close(), await replica.close(), await primary.close()))
  const who = async () => (await reads.query<{ app: string }>(`select current_setting('application_name') as app`)).rows[0]!.app
  const up = async () => /^wire_replica_up 1$/m.test(await registry.metrics())
  return { link, who, up }
}

t.test('after the first read finds the replica silent, reads go to the primary without trying it', async (t) => {
  const { link, who, up } = await pools(t, 60_000)
  t.equal(await who(), 'wire-test-replica')
  t.ok(await up(), 'wire_replica_up 1')
  link.stall()
  t.equal(await who(), 'wire-test-primary', 'the read that found it silent is answered by the primary')
  t.notOk(await up(), 'wire_replica_up 0')
  const held = link.held()
  for (let i = 0; i < 5; i++) t.equal(await who(), 'wire-test-primary')
  t.equal(link.held(), held, 'none of those reads was sent to the replica')
})

t.test('reads come back to the replica once a background check finds it answering', async (t) => {
  const { link, who, up } = await pools(t, 100)
  link.stall()
  t.equal(await who(), 'wire-test-primary')
  link.pass()
  await until(async () => (await who()) === 'wire-test-replica', 10_000, 'reads to go to the replica again')
  t.ok(await up(), 'wire_replica_up 1 again')
})
