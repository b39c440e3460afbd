import t from 'tap'
import { fleetSchema, json, publish, startReplica, startRole } from '../helpers/fleet.js'
import { TEST_DATABASE_URL, TEST_REDIS_URL } from '../helpers/services.js'
import { eventually, until } from '../helpers/wait.js'

// The design card's shape for real: a writer process, two reader processes on a streaming replica,
// woken over Redis pub/sub. The readers' fallback timer is 10 s, so a prompt answer is the wake-up.

/** One number from a role's GET /metrics: the first group of `line`. */
const metricOf = async (url: string, line: RegExp) => Number(line.exec(await (await fetch(`${url}/metrics`)).text())?.[1] ?? NaN)
const WAITING = /^wire_waiting_pollers (\d+)$/m

t.test('a publish on the writer wakes long-polls on two readers at once', async (t) => {
  const replica = await startReplica(t)
  const env = { DATABASE_URL: TEST_DATABASE_URL, REDIS_URL: TEST_REDIS_URL, WIRE_PG_SCHEMA: fleetSchema(t) }
  const writer = await startRole(t, 'writer', env)
  const readerEnv = { ...env, DATABASE_REPLICA_URL: replica.url, WAKE_FALLBACK_POLL_MS: '10000' }
  const readers = await Promise.all([startRole(t, 'reader', readerEnv), startRole(t, 'reader', readerEnv)])

  for (const r of readers) t.equal((await json(`${r.url}/readyz`)).ok, true, 'reader ready on the replica')
  t.equal((await fetch(`${writer.url}/sw/signals`)).status, 405, 'the writer serves no feed reads')
  t.equal((await fetch(`${readers[0]!.url}/sw/signals`, { method: 'POST' })).status, 405, 'a reader accepts no publish')

  const rounds = 5
  const latencies: number[] = []
  for (let i = 0; i < rounds; i++) {
    const cursors = await Promise.all(readers.map(async (r) => (await json(`${r.url}/sw/signals?limit=1`)).nextCursor as number))
    const polls = readers.map((r, k) => json(`${r.url}/sw/signals?cursor=${cursors[k]}&wait=10`).then((page) => ({ page, at: Date.now() })))
    await until(
      async () => (await Promise.all(readers.map((r) => metricOf(r.url, WAITING)))).every((n) => n === 1),
      5000,
      'both polls waiting',
    )
    const t0 = Date.now()
    const res = await publish(writer, { $type: 'broadcast', round: i })
    t.equal(res.status, 200)
    const { signal } = (await res.json()) as any
    for (const { page, at } of await Promise.all(polls)) {
      t.equal(page.signals[0]?.id, signal.id, `round ${i}: woken with the new signal`)
      latencies.push(at - t0)
    }
  }
  const worst = Math.max(...latencies)
  t.ok(worst < 1000, `publish → both readers answered: worst ${worst} ms over ${latencies.length} long-polls (fallback timer is 10 s)`)
  t.comment(`wake latencies (ms, incl. the publish round trip): ${latencies.join(', ')}`)
})

t.test('without Redis, a publish on the writer wakes a reader process through LISTEN/NOTIFY', async (t) => {
  const env = { DATABASE_URL: TEST_DATABASE_URL, WIRE_PG_SCHEMA: fleetSchema(t) } // no REDIS_URL
  const writer = await startRole(t, 'writer', env)
  const reader = await startRole(t, 'reader', { ...env, WAKE_FALLBACK_POLL_MS: '10000' })
  const metric = (line: RegExp) => metricOf(reader.url, line)
  t.ok(await eventually(async () => (await metric(/^wire_pg_listen_up (\d+)$/m)) === 1), 'the reader listens on the primary')
  const { nextCursor } = await json(`${reader.url}/sw/signals?limit=1`)
  const poll = json(`${reader.url}/sw/signals?cursor=${nextCursor}&wait=10`).then((page) => ({ page, at: Date.now() }))
  t.ok(await eventually(async () => (await metric(WAITING)) === 1), 'the long-poll waits')
  const t0 = Date.now()
  const res = await publish(writer, { $type: 'broadcast', text: 'no redis' })
  t.equal(res.status, 200)
  const { signal } = (await res.json()) as any
  const { page, at } = await poll
  t.equal(page.signals[0]?.id, signal.id, 'woken with the new signal')
  t.ok(at - t0 < 1000, `answered ${at - t0} ms after the publish (the fallback timer is 10 s)`)
  t.ok((await metric(/^wire_bus_messages_total\{path="pg",outcome="delivered"\} (\d+)$/m)) >= 1, 'the wake-up came by NOTIFY')
})
