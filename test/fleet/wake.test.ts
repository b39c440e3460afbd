import t from 'tap'
import { fleetSchema, json, publish, startReplica, startRole } from '../helpers/fleet.js'
import { TEST_DATABASE_URL, TEST_REDIS_URL } from '../helpers/services.js'

// The design card's shape for real: a writer process, two reader processes on a streaming replica,
// woken over Redis pub/sub. The readers' fallback timer is 10 s, so a prompt answer is the wake-up.

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
    await new Promise((r) => setTimeout(r, 150))
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
