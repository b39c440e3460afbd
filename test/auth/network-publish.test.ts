import t, { type Test } from 'tap'
import { startFakeIdentity, type FakeIdentity } from '../helpers/fake-identity.js'
import { startStack, type Stack } from '../helpers/stack.js'

// Network identity mode through the single-process board (PostgreSQL + Redis): who a publish is,
// standing, the unverified limits, the verify cache as seen from HTTP, and recentPollers.

const TOKENS = {
  'tok-rich': { identityId: 'id_rich', displayName: 'Rich Agent', verified: true, bits: 10 },
  'tok-rich-2': { identityId: 'id_rich', displayName: 'Rich Agent', verified: true, bits: 10 }, // second token, same identity
  'tok-broke': { identityId: 'id_broke', verified: true, bits: 0 },
  'tok-three': { identityId: 'id_three', verified: true, bits: 3 },
  'tok-fresh': { identityId: 'id_fresh', verified: false, bits: 5 },
}

async function networkStack(t: Test, env: Record<string, string> = {}): Promise<{ s: Stack; fake: FakeIdentity }> {
  const fake = await startFakeIdentity(t, TOKENS)
  const s = await startStack(t, { env: { IDENTITY_URL: fake.url, ...env } })
  return { s, fake }
}

const thread = (text = 'new topic') => ({ $type: 'broadcast', text })
const reply = (refId: string) => ({ $type: 'reply', $refId: refId, text: 're' })

t.test('a verified identity publishes as its network identity', async (t) => {
  const { s, fake } = await networkStack(t, { PUBLIC_WIRE_HOST: 'Board.Example:8443' })
  const pub = await s.publish(thread(), 'tok-rich')
  t.equal(pub.statusCode, 200)
  const expected = {
    origin: 'id_rich',
    originName: 'Rich Agent',
    originVerified: true,
    originUri: `sw://${fake.authority}/identities/id_rich`, // the identity network's authority, not the board's
  }
  t.match(pub.json().signal, { ...expected, uri: /^sw:\/\/board\.example:8443\/signals\// })
  t.match((await s.read()).signals[0], expected, 'the feed serves the same origin')
  t.same(fake.verifies, [{ token: 'tok-rich', body: { authority: 'board.example:8443' } }], 'the board authority is the scope')
  t.notOk(s.logs.join('').includes('tok-rich'), 'the token is never logged')
})

t.test('discovery names the identity network and network mode', async (t) => {
  const { s, fake } = await networkStack(t)
  const doc = (await s.app.inject({ url: '/.well-known/wire' })).json()
  t.equal(doc.identity, fake.url)
  t.equal(doc.identityMode, 'network')
  t.equal(fake.verifyCalls(), 0, 'discovery never calls the network')
})

t.test('opening a thread needs THREAD_BIT_FLOOR bits; replies are never gated', async (t) => {
  t.test('default floor of 1', async (t) => {
    const { s } = await networkStack(t)
    const denied = await s.publish(thread(), 'tok-broke')
    t.equal(denied.statusCode, 402)
    t.same(denied.json().error.details, { required: 1, bits: 0 })
    t.equal(denied.json().error.code, 'insufficient_standing')
    const root = (await s.publish(thread(), 'tok-rich')).json().signal
    const r = await s.publish(reply(root.id), 'tok-broke')
    t.equal(r.statusCode, 200, 'a zero-bit identity may reply')
    t.equal(r.json().signal.refId, root.id)
  })
  t.test('THREAD_BIT_FLOOR=5', async (t) => {
    const { s } = await networkStack(t, { THREAD_BIT_FLOOR: '5' })
    const denied = await s.publish(thread(), 'tok-three')
    t.equal(denied.statusCode, 402)
    t.same(denied.json().error.details, { required: 5, bits: 3 })
    t.equal((await s.publish(thread(), 'tok-rich')).statusCode, 200, '10 bits clear a floor of 5')
  })
})

t.test('an unverified identity opens UNVERIFIED_THREADS_PER_DAY threads per rolling 24 h', async (t) => {
  const { s } = await networkStack(t)
  const first = await s.publish(thread('one'), 'tok-fresh')
  t.equal(first.statusCode, 200)
  t.equal(first.json().signal.originVerified, false)
  const second = await s.publish(thread('two'), 'tok-fresh')
  t.equal(second.statusCode, 403)
  t.equal(second.json().error.code, 'unverified_limited')
  t.equal((await s.publish(reply(first.json().signal.id), 'tok-fresh')).statusCode, 200, 'replies are not limited')
  for (let i = 0; i < 3; i++) t.equal((await s.publish(thread(), 'tok-rich')).statusCode, 200, 'verified identities are not limited')
  await s.infra.primary.query(`update ${s.schema}.signals set created_at = now() - interval '25 hours' where origin = 'id_fresh'`)
  t.equal((await s.publish(thread('three'), 'tok-fresh')).statusCode, 200, 'allowed again once the thread is 24 h old')
})

t.test('an unverified identity gets UNVERIFIED_RATE_LIMIT_MAX publishes per hour', async (t) => {
  const { s } = await networkStack(t, { UNVERIFIED_RATE_LIMIT_MAX: '3', PUBLISH_RATE_LIMIT_MAX: '100' })
  const root = (await s.publish(thread(), 'tok-fresh')).json().signal
  t.equal((await s.publish(reply(root.id), 'tok-fresh')).statusCode, 200)
  t.equal((await s.publish(reply(root.id), 'tok-fresh')).statusCode, 200)
  const limited = await s.publish(reply(root.id), 'tok-fresh')
  t.equal(limited.statusCode, 429)
  t.match(limited.json().error, { code: 'rate_limited', details: { limit: 3 } })
  t.ok(Number(limited.headers['retry-after']) > 60, `Retry-After ${limited.headers['retry-after']} s: an hourly window`)
  for (let i = 0; i < 5; i++) t.equal((await s.publish(reply(root.id), 'tok-rich')).statusCode, 200, 'verified: the wider limit')
})

t.test('an unknown or missing token is 401, and a missing one never reaches the network', async (t) => {
  const { s, fake } = await networkStack(t)
  const unknown = await s.publish(thread(), 'tok-nobody')
  t.equal(unknown.statusCode, 401)
  t.equal(unknown.json().error.code, 'unauthorized')
  t.equal(fake.verifyCalls('tok-nobody'), 1)
  const none = await s.app.inject({ method: 'POST', url: '/sw/signals', payload: thread() })
  t.equal(none.statusCode, 401)
  t.equal(fake.verifyCalls(), 1)
  t.equal((await s.read()).signals.length, 0, 'nothing was published')
})

t.test('verify results are cached: sequential and concurrent publishes cost one call per token', async (t) => {
  const { s, fake } = await networkStack(t)
  fake.delayMs = 150 // every concurrent publish arrives while the first verify is still out
  const results = await Promise.all(Array.from({ length: 20 }, (_, i) => s.publish(thread(`c${i}`), 'tok-rich')))
  t.same(
    results.map((r) => r.statusCode),
    Array(20).fill(200),
  )
  t.equal(fake.verifyCalls('tok-rich'), 1, 'twenty concurrent publishes, one verify')
  fake.delayMs = 0
  for (let i = 0; i < 3; i++) await s.publish(thread(`s${i}`), 'tok-rich')
  t.equal(fake.verifyCalls('tok-rich'), 1, 'later publishes within ~30 s reuse it')
  for (let i = 0; i < 3; i++) t.equal((await s.publish(thread(), 'tok-unknown')).statusCode, 401)
  t.equal(fake.verifyCalls('tok-unknown'), 1, 'a rejection is cached too')
  await s.publish(thread(), 'tok-rich-2')
  t.equal(fake.verifyCalls('tok-rich-2'), 1, 'the cache is per token, not per identity')
})

t.test('reads with a token count the verified identity in recentPollers', async (t) => {
  const { s } = await networkStack(t)
  await s.publish(thread(), 'tok-rich')
  await s.publish(thread(), 'tok-rich-2')
  for (const token of ['tok-rich', 'tok-rich-2']) {
    const r = await s.app.inject({ url: '/sw/signals', headers: s.bearer(token) })
    t.equal(r.statusCode, 200)
  }
  const pollers = async () => (await s.app.inject({ url: '/sw/wire' })).json().stats.recentPollers
  t.equal(await pollers(), 1, 'two tokens of one identity are one poller')
  await s.app.inject({ url: '/sw/signals' })
  t.equal(await pollers(), 2, 'an anonymous read counts by address')
})
