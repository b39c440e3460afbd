import t from 'tap'
import { fleetSchema, publish, startRole, type Role } from '../helpers/fleet.js'
import { freePort } from '../helpers/process.js'
import { TEST_DATABASE_URL, TEST_REDIS_URL } from '../helpers/services.js'
import { until } from '../helpers/wait.js'
import { fillServer, fillUpstreams, readNginx, startNginx } from './nginx.js'

// An overloaded fleet behind deploy/nginx's recipe keeps every reader serving the followers at the
// head. Every reader is overloaded (a heap ratio it is always past), so each refuses with 503 any read
// that would cost a page from the database, and serves the polls its tail answers. nginx retries a
// 503 on another reader; it must not also take a reader out of its upstream for it (nginx's default
// max_fails=1 counts a 503 it retries on as a failed server, for 10 s): one far-behind follower's
// refused catch-up would move all of that reader's followers to the others, overloading them in turn.
// (Before max_fails=0: every follower after the refusal went to one reader.)

t.setTimeout(120_000)

t.test('overloaded readers behind nginx: catch-up is refused, followers at the head are still served', async (t) => {
  const schema = fleetSchema(t)
  const common = { DATABASE_URL: TEST_DATABASE_URL, REDIS_URL: TEST_REDIS_URL, WIRE_PG_SCHEMA: schema, TRUST_PROXY: '1' }
  const writer = await startRole(t, 'writer', common)
  // a tail of 5: a read from cursor 0 of 20 signals goes to the database
  const overloaded = { ...common, SHED_HEAP_USED_RATIO: '0.0001', READER_TAIL_SIZE: '5' }
  const [readerA, readerB] = await Promise.all([startRole(t, 'reader', overloaded), startRole(t, 'reader', overloaded)])
  const portOf = (r: Role) => Number(new URL(r.url).port)
  let head = 0
  for (let i = 0; i < 20; i++)
    head = ((await (await publish(writer, { $type: 'broadcast', text: `signal ${i}` })).json()) as { cursor: number }).cursor

  const port = await freePort()
  const upstreams = fillUpstreams(readNginx('wire-fleet-upstreams.conf'), {
    wire_writers: [portOf(writer)],
    wire_readers: [portOf(readerA), portOf(readerB)],
    wire_polls: [portOf(readerA), portOf(readerB)],
    wire_agents: [await freePort()],
  })
  const nginx = await startNginx(t, [upstreams, fillServer(readNginx('wire-fleet.conf'), { http: port })], port)
  const base = `http://127.0.0.1:${port}`
  const readers = new Set([`127.0.0.1:${portOf(readerA)}`, `127.0.0.1:${portOf(readerB)}`])

  // each reader itself: at the head served from its tail, from cursor 0 refused (once it samples its heap)
  for (const r of [readerA, readerB]) {
    await until(
      async () => (await fetch(`${r.url}/sw/signals?cursor=0&limit=5`)).status === 503,
      10_000,
      'the reader to shed a catch-up read',
    )
    await until(
      async () => ((await (await fetch(`${r.url}/sw/signals?limit=1`)).json()) as { nextCursor?: number }).nextCursor === head,
      10_000,
      'the reader to hold the head in its tail',
    )
  }

  // a far-behind follower through nginx: refused by both readers (nginx tried one, then the other)
  const behind = await fetch(`${base}/sw/signals?cursor=0&limit=5&behind=1`)
  t.equal(behind.status, 503, 'the catch-up read is refused')
  t.ok(behind.headers.get('retry-after'), 'with Retry-After')
  await behind.arrayBuffer()
  await until(() => nginx.log().some((e) => e.uri.includes('behind=1')), 5000, "nginx's log line")
  const tried = nginx.log().find((e) => e.uri.includes('behind=1'))!.upstreams
  t.same(new Set(tried), readers, 'nginx tried both readers')

  // followers at the head, right after: the readers answer them from their tails
  for (let i = 0; i < 6; i++) {
    const res = await fetch(`${base}/sw/signals?cursor=${head}&limit=5&head=${i}`)
    const body = (await res.json()) as { nextCursor?: number; error?: { code: string } }
    t.equal(res.status, 200, `follower ${i} at the head is served (${body.error?.code ?? 'ok'})`)
    t.equal(body.nextCursor, head)
  }
  await until(() => nginx.log().filter((e) => e.uri.includes('&head=')).length === 6, 5000, "nginx's log lines")
  const served = nginx.log().filter((e) => e.uri.includes('&head='))
  t.same(new Set(served.flatMap((e) => e.upstreams)), readers, 'by both readers, still in the upstream')
})
