import type { AddressInfo } from 'node:net'
import pg from 'pg'
import t, { type Test } from 'tap'
import { publishSignal } from '../../libs/shared/publish/index.js'
import { TEST_DATABASE_URL } from '../helpers/services.js'
import { startStack, type Stack } from '../helpers/stack.js'
import { insertSignals } from '../sweeper/support.js'
import { until } from '../helpers/wait.js'

// Fair under overload: the work already admitted finishes (followers near the head, served from
// the tail), and the excess is refused early and cheaply with 503 unavailable and Retry-After
// before it costs a page: while the process is overloaded, and while reads below the tail are
// more than the database gate admits. Asserted on outcomes, never on timings.

const TAIL = 50
const FOLLOWERS = 20
const SIGNALS = 10

/** A board larger than its tail (so old cursors need the database), listening, behind a trusted proxy. */
async function bigBoard(t: Test, env: Record<string, string>) {
  const s = await startStack(t, {
    env: { READER_TAIL_SIZE: String(TAIL), TRUST_PROXY: '1', ...env },
    seed: (infra, schema) => insertSignals(infra.primary, schema, { count: 500, createdSecondsAgo: 10, ttl: 3600 }),
  })
  await s.app.listen({ port: 0, host: '127.0.0.1' })
  const port = (s.app.server.address() as AddressInfo).port
  const get = async (path: string, client: string) => {
    const r = await fetch(`http://127.0.0.1:${port}${path}`, { headers: { 'x-forwarded-for': client } })
    return { status: r.status, retryAfter: r.headers.get('retry-after'), json: (await r.json()) as any }
  }
  return { s, get }
}

/** FOLLOWERS long-polling followers at the head, each from its own address; resolves with what each received. */
function follow(get: (path: string, client: string) => Promise<{ status: number; json: any }>, from: number, until: () => boolean) {
  return Array.from({ length: FOLLOWERS }, async (_, i) => {
    let cursor = from
    const seen: string[] = []
    const statuses = new Set<number>()
    while (!until() || seen.length < SIGNALS) {
      const r = await get(`/sw/signals?cursor=${cursor}&wait=5`, `198.51.100.${i + 1}`)
      statuses.add(r.status)
      if (r.status !== 200) break
      for (const s of r.json.signals) seen.push(s.payload.n)
      cursor = r.json.nextCursor
      if (seen.length >= SIGNALS) break
    }
    return { seen, statuses }
  })
}

const publishAll = async (s: Stack) => {
  for (let n = 0; n < SIGNALS; n++)
    await publishSignal(
      s.writer.publisher.deps,
      { address: '192.0.2.1', authorization: 'Bearer overload-publisher' },
      JSON.stringify({ $type: 'broadcast', n: String(n) }),
    )
}

t.test('overloaded: followers at the head are served every signal; a flood of database reads gets 503', async (t) => {
  // over the heap bound from the start: the process counts as overloaded all along
  const { s, get } = await bigBoard(t, { SHED_HEAP_USED_RATIO: '0.000001', SHED_EVENT_LOOP_DELAY_MS: '0' })
  await until(async () => (await get('/sw/signals?cursor=1', '203.0.113.250')).status === 503, 10_000, 'the process to count as overloaded')
  const head = s.reader.readSide.feed.head
  let published = false
  const followers = follow(get, head, () => published)
  await until(() => s.reader.readSide.feed.waiting >= FOLLOWERS, 10_000, 'every follower waiting')
  // the flood: deep reads and filtered newest pages from 100 addresses, none of them from the tail
  const flood = await Promise.all(
    Array.from({ length: 100 }, (_, i) => get(i % 2 ? `/sw/signals?cursor=${i}&limit=7` : `/sw/signals?tag=t${i}`, `203.0.113.${i + 1}`)),
  )
  await publishAll(s)
  published = true
  const got = await Promise.all(followers)
  for (const [i, f] of got.entries()) {
    t.same([...f.statuses], [200], `follower ${i}: every answer 200`)
    t.same(
      f.seen,
      Array.from({ length: SIGNALS }, (_, n) => String(n)),
      `follower ${i}: every signal, once, in order`,
    )
  }
  t.ok(
    flood.every((r) => r.status === 503 && r.json.error.code === 'unavailable' && Number(r.retryAfter) >= 1),
    'every flood read: 503 with Retry-After',
  )
  t.equal(s.reader.readSide.feed.waiting, 0)
})

t.test('more reads below the tail than the gate admits: the excess gets 503 at once, followers keep receiving', async (t) => {
  const { s, get } = await bigBoard(t, { READ_DB_CONCURRENCY_MAX: '2', READ_STATEMENT_TIMEOUT_MS: '60000' })
  // hold every database read of the board's signals: the admitted deep reads wait, visibly
  const lock = new pg.Client({ connectionString: TEST_DATABASE_URL })
  await lock.connect()
  t.teardown(() => lock.end())
  const head = s.reader.readSide.feed.head
  let published = false
  const followers = follow(get, head, () => published)
  await until(() => s.reader.readSide.feed.waiting >= FOLLOWERS, 10_000, 'every follower waiting')
  await lock.query('begin')
  await lock.query(`lock table "${s.schema}".signals in access exclusive mode`)
  const deep = Array.from({ length: 10 }, (_, i) => get(`/sw/signals?cursor=${i + 1}&limit=7`, `203.0.113.${i + 1}`))
  const settled: Array<{ status: number; retryAfter: string | null }> = []
  for (const d of deep) void d.then((r) => settled.push(r))
  await until(() => settled.length >= 6, 10_000, 'the reads past the gate and its queue to be refused')
  t.ok(
    settled.every((r) => r.status === 503 && Number(r.retryAfter) >= 1),
    '2 running, 2 waiting: the other 6 refused at once with Retry-After',
  )
  t.equal(s.reader.readSide.feed.waiting, FOLLOWERS, 'the followers still wait, none refused')
  await lock.query('rollback')
  await publishAll(s)
  published = true
  const got = await Promise.all(followers)
  for (const f of got) t.same([f.seen.length, [...f.statuses]], [SIGNALS, [200]], 'a follower: every signal, never refused')
  const admitted = await Promise.all(deep)
  t.equal(admitted.filter((r) => r.status === 200).length, 4, 'the admitted four answered once the database was free')
  t.match((await s.app.inject({ url: '/metrics' })).body, /wire_refused_total\{reason="database_reads"\} 6/)
})
