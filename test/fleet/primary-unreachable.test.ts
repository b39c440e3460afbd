import t from 'tap'
import { fleetSchema, json, publish, startReplica, startRole, tcpProxy } from '../helpers/fleet.js'
import { TEST_DATABASE_URL, TEST_REDIS_URL } from '../helpers/services.js'
import { until } from '../helpers/wait.js'

// A reader whose replica is behind a head it was told about asks the primary for the rest. While the
// primary is unreachable (it died; a standby is being promoted) the reader answers from its replica
// and tail instead of failing: the cursor stops where the replica is, and nothing is skipped.

t.setTimeout(180_000)

t.test('replica behind and primary unreachable: reads answer 200 without skipping, and catch up after', async (t) => {
  const replica = await startReplica(t)
  const proxy = await tcpProxy(t) // the reader's way to the primary
  const schema = fleetSchema(t)
  const env = { DATABASE_URL: TEST_DATABASE_URL, REDIS_URL: TEST_REDIS_URL, WIRE_PG_SCHEMA: schema }
  const writer = await startRole(t, 'writer', env)
  const reader = await startRole(t, 'reader', {
    ...env,
    DATABASE_URL: proxy.url,
    DATABASE_URL_DIRECT: proxy.url,
    DATABASE_REPLICA_URL: replica.url,
  })
  let cursor = (await json(`${reader.url}/sw/signals`)).nextCursor as number
  const acked: Array<{ id: string; cursor: number }> = []
  const pub = async (i: number) => {
    const body = (await (await publish(writer, { $type: 'broadcast', i })).json()) as any
    acked.push({ id: body.signal.id, cursor: body.cursor })
  }
  for (let i = 0; i < 2; i++) await pub(i)
  await until(async () => (await json(`${reader.url}/sw/signals?cursor=${cursor}`)).signals.length === 2, 10_000, 'the replica to replay')

  await replica.pause()
  proxy.cut() // before the publishes: a reader whose replica stays behind reads what it lacks from the primary after 500 ms
  for (let i = 2; i < 5; i++) await pub(i)
  const seen: string[] = []
  const before = await fetch(`${reader.url}/sw/signals?cursor=${cursor}&wait=1`)
  t.equal(before.status, 200, 'a read below the heads the replica has not replayed is answered, not 503')
  const page = (await before.json()) as any
  t.same(
    page.signals.map((s: { id: string }) => s.id),
    acked.slice(0, 2).map((a) => a.id),
    'with what the replica holds',
  )
  for (const s of page.signals) seen.push(s.id)
  cursor = page.nextCursor
  t.ok(cursor < acked[2]!.cursor, 'its cursor stops before the signals the replica has not replayed')
  const ahead = await fetch(`${reader.url}/sw/signals?cursor=${acked[4]!.cursor}&wait=1`)
  t.equal(ahead.status, 200, 'a cursor from another reader, beyond what this one can confirm, is answered too')
  t.equal(((await ahead.json()) as any).nextCursor, acked[4]!.cursor, 'and kept where it was')

  proxy.restore()
  await replica.resume()
  for (let i = 5; i < 7; i++) await pub(i)
  for (let i = 0; i < 20 && seen.length < acked.length; i++) {
    const next = await json(`${reader.url}/sw/signals?cursor=${cursor}&wait=2`)
    cursor = next.nextCursor
    for (const s of next.signals) seen.push(s.id)
  }
  t.same(
    seen,
    acked.map((a) => a.id),
    'every signal, once, in order',
  )
})
