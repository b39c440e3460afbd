import t, { type Test } from 'tap'
import { startReader } from '../../apps/reader/app.js'
import { startWriter } from '../../apps/writer/app.js'
import { loadConfig } from '../../libs/shared/config/index.js'
import { createLogger } from '../../libs/shared/log/index.js'
import { startFakeIdentity } from '../helpers/fake-identity.js'
import { assertServicesUp, dropSchema, TEST_DATABASE_URL, TEST_REDIS_URL, uniqueSchema } from '../helpers/services.js'
import { startStack } from '../helpers/stack.js'
import { eventually, until } from '../helpers/wait.js'

// Network identity mode when the identity network is down, failing or slow (publishes fail closed,
// everything else keeps working), and the same behaviour on the embedded database and in the fleet.

const TOKENS = {
  'tok-rich': { identityId: 'id_rich', displayName: 'Rich Agent', bits: 10 },
  'tok-rich-2': { identityId: 'id_rich', displayName: 'Rich Agent', bits: 10 },
  'tok-cached': { identityId: 'id_cached', bits: 10 },
  'tok-broke': { identityId: 'id_broke', bits: 0 },
}
const ADMIN = { authorization: 'Bearer admin-secret-token' }
const thread = (text = 'topic') => ({ $type: 'broadcast', text })

t.test('with the identity network down, publishes fail closed and everything else works', async (t) => {
  const fake = await startFakeIdentity(t, TOKENS)
  const s = await startStack(t, { env: { IDENTITY_URL: fake.url } })
  t.equal((await s.publish(thread('before'), 'tok-cached')).statusCode, 200)
  const { nextCursor } = await s.read()
  const poll = s.app.inject({ url: `/sw/signals?cursor=${nextCursor}&wait=4` }).then((r) => r.json())
  await fake.stop()

  const down = await s.publish(thread(), 'tok-rich')
  t.equal(down.statusCode, 503, 'not 401: the token may be fine')
  t.equal(down.json().error.code, 'unavailable')
  t.equal(down.headers['retry-after'], '5')
  t.notOk(JSON.stringify(down.json()).includes('ECONNREFUSED'), 'no upstream detail in the body')
  t.match(s.logs.join(''), /ECONNREFUSED/, 'the log has the detail')
  t.notOk(s.logs.join('').includes('tok-rich'), 'but never the token')

  const cached = await s.publish(thread('during'), 'tok-cached')
  t.equal(cached.statusCode, 200, 'a token verified in the last ~30 s still publishes')
  t.match(await poll, { signals: [{ payload: { text: 'during' } }] }, 'long-polls keep being served and woken')

  const t0 = Date.now()
  const read = await s.app.inject({ url: '/sw/signals', headers: s.bearer('tok-rich') })
  t.equal(read.statusCode, 200, 'a read with an unverifiable token is served')
  t.ok(Date.now() - t0 < 1000, 'and not held up by the network')
  t.equal((await s.app.inject({ url: '/.well-known/wire' })).json().identityMode, 'network')
  t.equal((await s.app.inject({ url: '/readyz' })).statusCode, 200, 'still ready: reads need no identity network')
  t.equal((await s.app.inject({ url: '/sw/admin/wire', headers: ADMIN })).statusCode, 200)
  const rule = await s.app.inject({
    method: 'POST',
    url: '/sw/admin/rules',
    headers: ADMIN,
    payload: { ruleType: 'deny', identityId: 'id_x' },
  })
  t.equal(rule.statusCode, 201, 'admin writes work')

  await fake.start()
  const back = await s.publish(thread('after'), 'tok-rich')
  t.equal(back.statusCode, 200, 'publishes resume once the network is back on the same address')
  t.equal(back.json().signal.origin, 'id_rich')
})

t.test('a 5xx from the identity network is 503 unavailable', async (t) => {
  const fake = await startFakeIdentity(t, TOKENS)
  const s = await startStack(t, { env: { IDENTITY_URL: fake.url } })
  fake.failWith = 502
  const r = await s.publish(thread(), 'tok-rich')
  t.equal(r.statusCode, 503)
  t.equal(r.json().error.code, 'unavailable')
  fake.failWith = null
  t.equal((await s.publish(thread(), 'tok-rich')).statusCode, 200, 'the failure was not cached')
})

t.test('a slow identity network: publishes answer 503 within ~3 s, reads are not slowed', async (t) => {
  const fake = await startFakeIdentity(t, TOKENS)
  const s = await startStack(t, { env: { IDENTITY_URL: fake.url } })
  fake.delayMs = 10_000
  const t0 = Date.now()
  const pubs = Promise.all([1, 2, 3].map(() => s.publish(thread(), 'tok-rich')))
  await until(() => fake.verifyCalls('tok-rich') === 1, 2000, 'the publishes waiting on the slow network')
  const read = await s.app.inject({ url: '/sw/signals', headers: s.bearer('tok-rich-2') })
  t.equal(read.statusCode, 200)
  t.ok(Date.now() - t0 < 1000, `a read with an unverified token took ${Date.now() - t0} ms`)
  const results = await pubs
  const ms = Date.now() - t0
  t.same(
    results.map((r) => r.statusCode),
    [503, 503, 503],
  )
  t.ok(ms >= 2500 && ms < 4500, `answered after ${ms} ms (timeout 3 s)`)
  t.equal(fake.verifyCalls('tok-rich'), 1, 'concurrent publishes shared one verify')
})

t.test('network mode on the embedded database', async (t) => {
  const fake = await startFakeIdentity(t, TOKENS)
  const s = await startStack(t, { env: { IDENTITY_URL: fake.url, DATABASE_URL: '', WIRE_DATA_DIR: 'memory://' } })
  t.equal(s.cfg.db.kind, 'embedded')
  const pub = await s.publish(thread(), 'tok-rich')
  t.equal(pub.statusCode, 200)
  t.match(pub.json().signal, { origin: 'id_rich', originUri: `sw://${fake.authority}/identities/id_rich`, originVerified: true })
  t.equal((await s.publish(thread(), 'tok-broke')).statusCode, 402)
  await s.app.inject({ url: '/sw/signals', headers: s.bearer('tok-rich') })
  // a publish with another token waits for its own verify: one the read had started would have gone first
  t.equal((await s.publish(thread(), 'tok-cached')).statusCode, 200)
  t.equal(fake.verifyCalls('tok-rich'), 1, 'the read found the identity in the cache it shares with the publish path')
  t.equal((await s.app.inject({ url: '/sw/wire' })).json().stats.recentPollers, 1)
  t.equal((await s.app.inject({ url: '/.well-known/wire' })).json().identity, fake.url)
  await fake.stop()
  t.equal((await s.publish(thread(), 'tok-rich-2')).statusCode, 503)
  t.equal((await s.app.inject({ url: '/sw/signals' })).statusCode, 200)
})

/** Writer and reader as separate processes would run them: own infra, own contexts, own verify caches. */
async function startFleet(t: Test, env: Record<string, string>) {
  await assertServicesUp()
  const schema = uniqueSchema()
  const cfg = loadConfig({
    DATABASE_URL: TEST_DATABASE_URL,
    REDIS_URL: TEST_REDIS_URL,
    WIRE_PG_SCHEMA: schema,
    WIRE_CONFIG: '/nonexistent/subwire.config.json',
    SERVER_ADMIN_TOKEN: 'admin-secret-token',
    LOG_LEVEL: 'silent',
    ...env,
  })
  const log = createLogger('server', cfg.logLevel)
  const w = await startWriter(cfg, log)
  const r = await startReader(cfg, log, { fallbackPollMs: 200 })
  t.teardown(async () => {
    await r.close()
    await w.close()
    await dropSchema(schema)
  })
  return { writer: w.app, reader: r.app, readerCtx: r.root }
}

t.test('network mode in the fleet: separate writer and reader processes', async (t) => {
  const fake = await startFakeIdentity(t, TOKENS)
  const { writer, reader, readerCtx } = await startFleet(t, { IDENTITY_URL: fake.url })
  const post = (token: string, body: object) =>
    writer.inject({ method: 'POST', url: '/sw/signals', headers: { authorization: `Bearer ${token}` }, payload: body })
  const pub = await post('tok-rich', thread())
  t.equal(pub.statusCode, 200)
  t.equal(pub.json().signal.originUri, `sw://${fake.authority}/identities/id_rich`)
  const denied = await post('tok-broke', thread())
  t.equal(denied.statusCode, 402)
  t.equal((await post('tok-broke', { $type: 'reply', $refId: pub.json().signal.id })).statusCode, 200)
  t.equal((await reader.inject({ url: '/.well-known/wire' })).json().identityMode, 'network')

  // the reader has a cache of its own: its first read with a token verifies in the background
  const auth = { authorization: 'Bearer tok-rich' }
  t.equal((await reader.inject({ url: '/sw/signals', headers: auth })).statusCode, 200)
  t.ok(await eventually(() => readerCtx.identity.peek(auth.authorization) === 'id_rich', 2000), 'the reader learned the identity')
  t.equal(fake.verifyCalls('tok-rich'), 2, 'one verify by the writer, one by the reader')

  await fake.stop()
  t.equal((await post('tok-rich-2', thread())).statusCode, 503, 'the writer fails closed')
  const page = await reader.inject({ url: '/sw/signals', headers: { authorization: 'Bearer tok-rich-2' } })
  t.equal(page.statusCode, 200, 'the reader serves')
  t.equal(page.json().signals.length, 2)
})
