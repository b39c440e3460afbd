import type { AddressInfo } from 'node:net'
import pg from 'pg'
import t, { type Test } from 'tap'
import { loadConfig } from '../../libs/shared/config/index.js'
import { rawConnection } from '../helpers/raw-http.js'
import { TEST_DATABASE_URL } from '../helpers/services.js'
import { startStack, type Stack } from '../helpers/stack.js'
import { until } from '../helpers/wait.js'

// The smaller findings of the public-by-default review, one test each.

/** Holds an exclusive lock on `table` of the stack's schema until released: queries on it wait, visibly. */
async function holdLock(t: Test, s: Stack, table: string) {
  const c = new pg.Client({ connectionString: TEST_DATABASE_URL })
  await c.connect()
  await c.query('begin')
  await c.query(`lock table "${s.schema}".${table} in access exclusive mode`)
  // pg_stat_activity is one snapshot per transaction: watch from outside the one holding the lock
  const watcher = new pg.Client({ connectionString: TEST_DATABASE_URL })
  await watcher.connect()
  const release = async () => {
    await c.query('rollback').catch(() => {})
    await c.end().catch(() => {})
    await watcher.end().catch(() => {})
  }
  t.teardown(release)
  /** Queries of the stack's schema waiting on the lock whose text includes `marker`. */
  const waiting = async (marker: string) =>
    (
      await watcher.query<{ n: number }>(
        `select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and query like $1 and query like $2`,
        [`%${s.schema}%`, `%${marker}%`],
      )
    ).rows[0]!.n
  return { release, waiting }
}

t.test('GET /sw/tags with random prefixes shares one aggregate; GET /sw/stats one read per bucket size in flight', async (t) => {
  const s = await startStack(t, { env: { READ_STATEMENT_TIMEOUT_MS: '60000' } }) // the held queries wait, not time out
  t.equal((await s.publish({ $type: 'offer', $tags: ['alpha', 'beta'] })).statusCode, 200)
  const lock = await holdLock(t, s, 'signals')
  const tags = Array.from({ length: 20 }, (_, i) => s.app.inject({ url: `/sw/tags?q=${'abcdefghij'[i % 10]}${i}` }).then((r) => r)) // .then() sends it now
  let settled = 0
  for (const p of tags) void p.then(() => settled++)
  await until(async () => settled > 0 || (await lock.waiting('unnest(x.tags)')) >= 1, 15_000, 'the tags aggregate to wait')
  t.equal(settled, 0, 'no tags answer came past the lock')
  const stats = Array.from({ length: 20 }, (_, i) => s.app.inject({ url: `/sw/stats?bucketSeconds=60&buckets=${6 + i}` }).then((r) => r))
  await until(async () => (await lock.waiting('stats_buckets b')) >= 1, 15_000, 'the stats read to wait')
  t.equal(await lock.waiting('unnest(x.tags)'), 1, '20 prefixes: one aggregate')
  t.equal(await lock.waiting('stats_buckets b'), 1, '20 bucket counts of one size: one read')
  await lock.release()
  const answers = await Promise.all(tags)
  t.ok(answers.every((r) => r.statusCode === 200))
  t.same((await s.app.inject({ url: '/sw/tags?q=al' })).json().tags, [{ tag: 'alpha', count: 1 }], 'a prefix filters the shared list')
  const st = await Promise.all(stats)
  t.same(
    st.map((r) => r.json().buckets.length),
    Array.from({ length: 20 }, (_, i) => 6 + i),
    'each answer has the buckets it asked for',
  )
  const pub = await s.publish({ $type: 'offer', $tags: ['alpine'] })
  await until(() => s.reader.readSide.feed.head >= pub.json().cursor, 5000, 'the feed to show the publish')
  t.same(
    (await s.app.inject({ url: '/sw/tags?q=alp' })).json().tags,
    [
      { tag: 'alpha', count: 1 },
      { tag: 'alpine', count: 1 },
    ],
    'what the feed shows, tags show at once',
  )
})

t.test('a replayed Idempotency-Key never returns a signal a moderator removed', async (t) => {
  const s = await startStack(t)
  const send = () =>
    s.app.inject({
      method: 'POST',
      url: '/sw/signals',
      headers: { ...s.bearer(), 'idempotency-key': 'retry-1' },
      payload: { $type: 'broadcast', text: 'x' },
    })
  const first = await send()
  t.equal(first.statusCode, 200)
  const id = first.json().signal.id
  t.equal(
    (await s.app.inject({ method: 'DELETE', url: `/sw/admin/signals/${id}`, headers: s.bearer('admin-secret-token') })).statusCode,
    200,
  )
  const again = await send()
  t.equal(again.statusCode, 404, 'the retry is told the signal is gone')
  t.equal(again.json().error.code, 'not_found')
  t.notOk(again.body.includes('"ok":true'), 'no ok:true with the removed signal')
  t.equal((await s.read()).signals.length, 0, 'and nothing was published again')
})

t.test('the admin token must be at least 16 characters', async (t) => {
  t.throws(() => loadConfig({ SERVER_ADMIN_TOKEN: 'x' }), /SERVER_ADMIN_TOKEN: must be at least 16 characters/)
  t.throws(() => loadConfig({ SERVER_ADMIN_TOKEN: 'fifteen-chars!!' }), /at least 16/)
  t.equal(loadConfig({ SERVER_ADMIN_TOKEN: 'sixteen-chars!!!' }).secrets.adminToken, 'sixteen-chars!!!')
})

t.test('A2A: an unexpected error inside the SDK is never passed to the client', async (t) => {
  const s = await startStack(t)
  const r = await s.app.inject({
    method: 'POST',
    url: '/a2a',
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { id: { a: 1 } } }),
  })
  t.notMatch(r.body, /trim|is not a function|TypeError/, 'no raw message')
  t.equal(r.json().error.code, -32600, 'a task id that is not a string is an invalid request')
})

t.test('JSON answers carry X-Content-Type-Options: nosniff, on both paths', async (t) => {
  const s = await startStack(t)
  for (const url of ['/sw/signals', '/sw/wire', '/sw/nope', '/.well-known/wire'])
    t.equal((await s.app.inject({ url })).headers['x-content-type-options'], 'nosniff', url)
  await s.app.listen({ port: 0, host: '127.0.0.1' })
  const c = rawConnection((s.app.server.address() as AddressInfo).port)
  t.teardown(() => c.end())
  c.get('/sw/signals')
  await until(() => c.answers.length === 1)
  t.match(c.answers[0]!.toString('latin1'), /\r\nx-content-type-options: nosniff\r\n/i, 'the fast path')
})

t.test('the fast path reads Connection as tokens, not substrings', async (t) => {
  const s = await startStack(t)
  await s.app.listen({ port: 0, host: '127.0.0.1' })
  const port = (s.app.server.address() as AddressInfo).port
  const ask = async (connection: string) => {
    const c = rawConnection(port)
    c.get('/sw/signals?limit=1', `Connection: ${connection}\r\n`)
    await until(() => c.answers.length === 1)
    const text = c.answers[0]!.toString('latin1')
    c.end()
    return /\r\nConnection: close\r\n/.test(text) ? 'close' : 'keep-alive'
  }
  t.equal(await ask('xclose'), 'keep-alive', '"xclose" asks for nothing')
  t.equal(await ask('keep-alive, Close'), 'close', 'a close token among others')
  t.equal(await ask('closed'), 'keep-alive')
  t.equal(await ask(' CLOSE '), 'close')
})
