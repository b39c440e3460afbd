import { Writable } from 'node:stream'
import t from 'tap'
import { networkIdentity, type NetworkIdentityOptions } from '../../libs/shared/auth/index.js'
import { WireError } from '../../libs/shared/domain/index.js'
import { createLogger } from '../../libs/shared/log/index.js'
import { manualClock } from '../helpers/clock.js'
import { startFakeIdentity } from '../helpers/fake-identity.js'
import { eventually, until } from '../helpers/wait.js'

// The network-mode resolver on its own, against the fake identity network: the cache, single
// flight, the read-path peek, registration and how each kind of answer maps to an error.

const bearer = (token: string) => `Bearer ${token}`

function client(url: string, o: Partial<NetworkIdentityOptions> = {}) {
  const logs: string[] = []
  const sink = new Writable({ write: (chunk, _e, cb) => void (logs.push(String(chunk)), cb()) })
  const resolver = networkIdentity({ url, authority: 'board.example', log: createLogger('server', 'debug', sink), ...o })
  return { resolver, logs }
}

/** Resolves with the WireError code the promise rejects with. */
const codeOf = (p: Promise<unknown>) =>
  p.then(
    () => 'resolved',
    (err: unknown) => (err instanceof WireError ? err.code : `not a WireError: ${String(err)}`),
  )

t.test('an accepted token becomes the network identity, reused until the cache entry ages out', async (t) => {
  const fake = await startFakeIdentity(t, { 'tok-alice': { identityId: 'id_alice', displayName: 'Alice', bits: 7 } })
  const clock = manualClock()
  const { resolver } = client(fake.url, { validMs: 300, clock })
  const who = await resolver.authenticate(bearer('tok-alice'))
  t.same(who, { id: 'id_alice', name: 'Alice', uri: `sw://${fake.authority}/identities/id_alice`, verified: true, bits: 7 })
  t.same(fake.verifies[0], { token: 'tok-alice', body: { authority: 'board.example' } }, 'token in the header, board authority in the body')
  await resolver.authenticate(bearer('tok-alice'))
  t.equal(fake.verifyCalls(), 1, 'second publish served from the cache')
  clock.advance(299)
  await resolver.authenticate(bearer('tok-alice'))
  t.equal(fake.verifyCalls(), 1, 'still cached just before it ages out')
  clock.advance(2)
  await resolver.authenticate(bearer('tok-alice'))
  t.equal(fake.verifyCalls(), 2, 'verified again once the entry aged out')
})

t.test('concurrent lookups of one uncached token make one verify call', async (t) => {
  const fake = await startFakeIdentity(t, { 'tok-bob': { identityId: 'id_bob' } })
  fake.delayMs = 100 // all twenty start before the first answer
  const { resolver } = client(fake.url)
  const all = await Promise.all(Array.from({ length: 20 }, () => resolver.authenticate(bearer('tok-bob'))))
  t.equal(fake.verifyCalls(), 1)
  t.ok(all.every((w) => w.id === 'id_bob'))
})

t.test('a rejected token is unauthorized and remembered only briefly', async (t) => {
  const fake = await startFakeIdentity(t)
  const clock = manualClock()
  const { resolver } = client(fake.url, { rejectedMs: 300, clock })
  t.equal(await codeOf(resolver.authenticate(bearer('tok-new'))), 'unauthorized')
  t.equal(await codeOf(resolver.authenticate(bearer('tok-new'))), 'unauthorized')
  t.equal(fake.verifyCalls(), 1, 'the rejection is cached')
  fake.tokens.set('tok-new', { identityId: 'id_new', userId: 'u', displayName: null, verified: false, bits: 0 })
  clock.advance(301)
  t.match(await resolver.authenticate(bearer('tok-new')), { id: 'id_new', name: null, verified: false, bits: 0 })
  t.equal(fake.verifyCalls(), 2)
})

t.test('403 from the network is unauthorized; other answers fail closed as unavailable', async (t) => {
  const fake = await startFakeIdentity(t, { 'tok-carol': { identityId: 'id_carol' } })
  const { resolver } = client(fake.url)
  fake.failWith = 403
  t.equal(await codeOf(resolver.authenticate(bearer('tok-forbidden'))), 'unauthorized')
  for (const status of [500, 502, 404, 429]) {
    fake.failWith = status
    const err = await resolver.authenticate(bearer('tok-carol')).catch((e: unknown) => e)
    t.match(err, { code: 'unavailable', retryAfter: Number }, `${status} → unavailable with retryAfter`)
  }
  fake.failWith = null
  t.equal((await resolver.authenticate(bearer('tok-carol'))).id, 'id_carol', 'failures were not cached')
  t.equal(fake.verifyCalls('tok-carol'), 5)
})

t.test('a malformed verify answer fails closed', async (t) => {
  const fake = await startFakeIdentity(t, { 'tok-odd': { identityId: 'has a space' }, 'tok-nobits': { identityId: 'id_x' } })
  fake.tokens.get('tok-nobits')!.bits = 'lots' as unknown as number
  const { resolver } = client(fake.url)
  t.equal(await codeOf(resolver.authenticate(bearer('tok-odd'))), 'unavailable', 'an id that cannot be a URI segment')
  t.equal(await codeOf(resolver.authenticate(bearer('tok-nobits'))), 'unavailable', 'bits that are not a number')
})

t.test('no token or a malformed header never reaches the network', async (t) => {
  const fake = await startFakeIdentity(t)
  const { resolver } = client(fake.url)
  t.equal(await codeOf(resolver.authenticate(undefined)), 'unauthorized')
  t.equal(await codeOf(resolver.authenticate('Basic abc')), 'unauthorized')
  t.equal(resolver.peek(undefined), null)
  t.equal(resolver.peek('Bearer two words'), null)
  t.equal(fake.verifyCalls(), 0)
})

t.test('an unreachable or slow network is unavailable; the timeout bounds the wait', async (t) => {
  const fake = await startFakeIdentity(t, { 'tok-dave': { identityId: 'id_dave' } })
  const { resolver } = client(fake.url, { timeoutMs: 300 })
  fake.delayMs = 2000
  let t0 = Date.now()
  t.equal(await codeOf(resolver.authenticate(bearer('tok-dave'))), 'unavailable')
  t.ok(Date.now() - t0 < 1000, `timed out after ${Date.now() - t0} ms`)
  await fake.stop()
  t0 = Date.now()
  t.equal(await codeOf(resolver.authenticate(bearer('tok-dave'))), 'unavailable', 'connection refused')
  t.ok(Date.now() - t0 < 1000)
  fake.delayMs = 0
  await fake.start()
  t.equal((await resolver.authenticate(bearer('tok-dave'))).id, 'id_dave', 'works again after a restart on the same port')
})

t.test('peek never waits: an unknown token counts by its hash until a background verify names it', async (t) => {
  const fake = await startFakeIdentity(t, { 'tok-erin': { identityId: 'id_erin' } })
  fake.delayMs = 300
  const { resolver } = client(fake.url)
  const t0 = Date.now()
  const first = resolver.peek(bearer('tok-erin'))
  t.ok(Date.now() - t0 < 100, 'answered without waiting for the network')
  t.match(first, /^tok:[A-Za-z0-9_-]{22}$/)
  t.not(first, resolver.peek(bearer('tok-other')), 'different tokens, different keys')
  t.equal(resolver.peek(bearer('tok-erin')), first, 'same token, same key while verifying')
  t.ok(await eventually(() => resolver.peek(bearer('tok-erin')) === 'id_erin', 2000), 'named once the verify answered')
  t.equal(fake.verifyCalls('tok-erin'), 1, 'one background verify, however many reads')
  await resolver.authenticate(bearer('tok-erin'))
  t.equal(fake.verifyCalls('tok-erin'), 1, 'publishes reuse what the read learned')
  t.ok(await eventually(() => resolver.peek(bearer('tok-other')) === null, 2000), 'a rejected token is no identity')
})

t.test('peek stays quiet while the network is down', async (t) => {
  const fake = await startFakeIdentity(t)
  await fake.stop()
  const clock = manualClock()
  const { resolver } = client(fake.url, { clock })
  t.equal(await codeOf(resolver.authenticate(bearer('tok-x'))), 'unavailable')
  await fake.start()
  for (let i = 0; i < 5; i++) t.match(resolver.peek(bearer(`tok-read-${i}`)), /^tok:/)
  clock.advance(4999)
  t.match(resolver.peek(bearer('tok-still-paused')), /^tok:/)
  clock.advance(2) // the pause (5 s, the Retry-After a failure gives) is over: the next unknown token is verified
  resolver.peek(bearer('tok-after-pause'))
  await until(() => fake.verifyCalls() > 0, 2000, 'the background verify after the pause')
  // those peeked during the pause would have started their verifies first, and arrived first
  t.same(
    fake.verifies.map((v) => v.token),
    ['tok-after-pause'],
    'no background verifies during the pause after a failure',
  )
})

t.test('register creates an identity on the network that verify then accepts', async (t) => {
  const fake = await startFakeIdentity(t)
  const { resolver, logs } = client(fake.url)
  const r = await resolver.register()
  t.match(r, { token: /^reg_/, identityId: 'id_reg1', identityUri: `sw://${fake.authority}/identities/id_reg1` })
  t.equal(fake.registerCalls(), 1)
  t.match(await resolver.authenticate(bearer(r.token)), { id: 'id_reg1', verified: false, bits: 0 })
  t.notOk(logs.join('').includes(r.token), 'the new token is not logged')
  await fake.stop()
  t.equal(await codeOf(resolver.register()), 'unavailable')
})

t.test('tokens never reach the log', async (t) => {
  const fake = await startFakeIdentity(t, { 'tok-secret-frank': { identityId: 'id_frank' } })
  const { resolver, logs } = client(fake.url)
  await resolver.authenticate(bearer('tok-secret-frank'))
  await codeOf(resolver.authenticate(bearer('tok-secret-unknown')))
  fake.failWith = 500
  await codeOf(resolver.authenticate(bearer('tok-secret-down')))
  t.ok(logs.length >= 3, 'calls were logged')
  t.notOk(/tok-secret/.test(logs.join('')), 'no token in any line')
})
