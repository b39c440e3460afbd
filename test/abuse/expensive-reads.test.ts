import pg from 'pg'
import t from 'tap'
import { parseReadQuery } from '../../libs/shared/domain/index.js'
import { TEXT_SCAN_BUDGET } from '../../libs/shared/db/index.js'
import { tailNewest, tailPage } from '../../libs/shared/feed/tail-pages.js'
import { Tail } from '../../libs/shared/feed/tail.js'
import { startStack } from '../helpers/stack.js'
import { TEST_DATABASE_URL } from '../helpers/services.js'
import { until } from '../helpers/wait.js'

// Public reads with bounded cost: tag and q bounds, q matching that keeps its lower-cased text with
// the tail, thread walks bounded in depth and rows, one aggregate query at a time, and
// statement_timeout on read pools answering 503 unavailable (not 500).

const errorOf = (r: { statusCode: number; json: () => any }) => ({ status: r.statusCode, code: r.json().error?.code })

t.test('tag count and q length are bounded: 400 invalid_request past them', async (t) => {
  const s = await startStack(t, { noRedis: true })
  const get = (q: string) => s.app.inject({ url: `/sw/signals?${q}` })
  const tags = (n: number) => Array.from({ length: n }, (_, i) => `t${i}`).join(',')
  t.equal((await get(`tag=${tags(16)}`)).statusCode, 200, '16 tags')
  t.same(errorOf(await get(`tag=${tags(17)}`)), { status: 400, code: 'invalid_request' }, '17 tags in one parameter')
  t.same(
    errorOf(await get(Array.from({ length: 14 }, (_, i) => `tag=${tags(130).replaceAll('t', `p${i}x`)}`).join('&'))),
    { status: 400, code: 'invalid_request' },
    '1,820 tags in 14 parameters',
  )
  t.equal((await get(`tag=a,A,a,,b`)).statusCode, 200, 'duplicates count once')
  t.equal((await get(`q=${'é'.repeat(256)}`)).statusCode, 200, 'q of 256 characters')
  t.same(errorOf(await get(`q=${'a'.repeat(257)}`)), { status: 400, code: 'invalid_request' }, 'q of 257')
  const mcpTags = await s.app.inject({
    method: 'POST',
    url: '/mcp',
    headers: { accept: 'application/json, text/event-stream', 'content-type': 'application/json' },
    payload: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'read_signals', arguments: { tag: tags(40) } } },
  })
  t.equal(JSON.parse(mcpTags.json().result.content[0].text).error.code, 'invalid_request', 'the MCP tool too')
})

t.test("the tail keeps each signal's search text: q lower-cases a payload once, not per read", async (t) => {
  const tail = new Tail('test', 10)
  const signal = (seq: number, text: string) => ({
    seq,
    id: `id${seq}`,
    origin: 'fp_x',
    originUri: 'sw://test/identities/x',
    originName: null,
    originVerified: true,
    type: 'note',
    tags: [],
    payloadText: JSON.stringify({ text }),
    refId: null,
    ttl: 600,
    createdAtMs: Date.now(),
    expiresAtMs: Date.now() + 600_000,
    pinned: false,
  })
  tail.reset([signal(1, 'Hello World'), signal(2, 'other')] as never, 2, 0)
  const q = parseReadQuery({ q: 'WORLD' }, Date.now(), 'test')
  t.equal(tailPage(tail, q, 0, Date.now(), 0)!.signals.length, 1)
  const kept = tail.entries.map((e) => e.search)
  t.ok(
    kept.every((x) => typeof x === 'string' && x === x.toLowerCase()),
    'kept, lower-cased',
  )
  tailPage(tail, parseReadQuery({ q: 'hello' }, Date.now(), 'test'), 0, Date.now(), 0)
  t.ok(
    tail.entries.every((e, i) => e.search === kept[i]),
    'the next read reuses it',
  )

  // a tail holding as many signals as a database search may look at answers the newest search page itself
  const big = new Tail('test', 2 * TEXT_SCAN_BUDGET)
  big.reset(Array.from({ length: TEXT_SCAN_BUDGET }, (_, i) => signal(1000 + i, 'x')) as never, 1000 + TEXT_SCAN_BUDGET, 999)
  const now = Date.now()
  t.same(
    tailNewest(big, parseReadQuery({ q: 'nowhere' }, now, 'test'), now, 0),
    { signals: [], nextCursor: big.head, partial: true },
    'a search: from the tail, saying older matches may exist',
  )
  t.equal(
    tailNewest(big, parseReadQuery({ type: 'nowhere' }, now, 'test'), now, 0),
    null,
    'other filters: the database may hold older matches',
  )
})

t.test('a thread read walks at most 64 levels and answers at most 1,000 signals', async (t) => {
  const s = await startStack(t, { noRedis: true, env: { PUBLISH_RATE_LIMIT_MAX: '0', PUBLISH_ADDRESS_RATE_LIMIT_MAX: '0' } })
  const root = (await s.publish({ $type: 'request', text: 'root' })).json().signal
  let parent = root.id
  for (let i = 0; i < 70; i++) parent = (await s.publish({ $type: 'reply', $refId: parent, depth: i + 1 })).json().signal.id
  const deep = (await s.app.inject({ url: `/sw/signals/${root.id}/thread` })).json().signals
  t.equal(deep.length, 65, 'the root and 64 levels of replies')
  t.same(
    deep.map((x: any) => x.payload.depth ?? 0),
    Array.from({ length: 65 }, (_, i) => i),
    'oldest first, nearest levels',
  )
  // a wide thread: many direct replies, inserted straight into the table
  await s.infra.primary.query(
    `with h as (update "${s.schema}".feed_head set seq = seq + 1500 returning seq)
     insert into "${s.schema}".signals (seq, id, origin, origin_uri, origin_verified, type, tags, payload, ref_id, ttl_seconds, created_at, expires_at)
     select h.seq - 1500 + i, 'w' || lpad(i::text, 19, '0'), 'fp_w', 'sw://test/identities/w', true, 'reply', '{}', '{"$type":"reply"}', $1,
            600, now(), now() + interval '10 minutes' from h, generate_series(1, 1500) i`,
    [root.id],
  )
  const wide = (await s.app.inject({ url: `/sw/signals/${root.id}/thread` })).json().signals
  t.equal(wide.length, 1000, 'one page of 1,000')
  t.equal(wide[0].id, root.id, 'the root first')
})

t.test('aggregates run one at a time per process, and a slow read is cut at READ_STATEMENT_TIMEOUT_MS with 503', async (t) => {
  const s = await startStack(t, { noRedis: true, env: { READ_STATEMENT_TIMEOUT_MS: '1500' } })
  const sig = (await s.publish({ $type: 'broadcast', $tags: ['x'] })).json().signal
  const locker = new pg.Client({ connectionString: TEST_DATABASE_URL })
  const watcher = new pg.Client({ connectionString: TEST_DATABASE_URL }) // outside the lock's transaction, whose view of pg_stat_activity is a snapshot
  await Promise.all([locker.connect(), watcher.connect()])
  t.teardown(() => Promise.all([locker.end(), watcher.end()]))
  await locker.query('begin')
  await locker.query(`lock table "${s.schema}".signals in access exclusive mode`)
  const waitingCounts = async () =>
    (
      await watcher.query<{ n: number }>(
        `select count(*)::int as n from pg_stat_activity where application_name = 'wire-reader' and query like '%active_identities%' and wait_event_type = 'Lock'`,
      )
    ).rows[0]!.n
  // 20 requests for the board's counts while the table is locked: one query waits for the lock
  const wires = Array.from({ length: 20 }, () => s.app.inject({ url: '/sw/wire' }).then((r) => r)) // .then() sends it now
  await until(async () => (await waitingCounts()) === 1, 5000, 'the count query to wait on the lock')
  t.equal(await waitingCounts(), 1, 'one count query for 20 requests')
  const answers = await Promise.all(wires)
  for (const r of answers) t.same(errorOf(r), { status: 503, code: 'unavailable' }, 'cut by statement_timeout: 503, not 500')
  t.ok(Number(answers[0]!.headers['retry-after']) >= 1, 'Retry-After')
  const byId = await s.app.inject({ url: `/sw/signals/${sig.id}` })
  t.same(errorOf(byId), { status: 503, code: 'unavailable' })
  await locker.query('rollback')
  t.equal((await s.app.inject({ url: `/sw/signals/${sig.id}` })).statusCode, 200, 'served again once the lock is gone')
  t.equal((await s.app.inject({ url: '/sw/wire' })).json().stats.activeSignals, 1)
  t.notOk(
    s.logs.some((l) => l.includes('"level":50')),
    'a timeout is no fault: nothing at error level',
  )
})
