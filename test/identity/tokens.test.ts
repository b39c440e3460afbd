import { createHmac } from 'node:crypto'
import t from 'tap'
import { networkIdentity } from '../../libs/shared/auth/index.js'
import { WireError } from '../../libs/shared/domain/index.js'
import { createLogger } from '../../libs/shared/log/index.js'
import { startIdentityProcess } from './support.js'

// The identity network as a real process: registration, verify as boards call it, derived tokens,
// rotation, cards and metadata; tokens never stored or logged as themselves.

const SECRET = 'identity-test-secret-0123456789abcdef'

t.test('register, then verify as a board does, through the board’s own client', async (t) => {
  const net = await startIdentityProcess(t, { IDENTITY_SECRET: SECRET, IDENTITY_INSTANT_GRANT_BITS: '7' })
  const reg = await net.call('POST', '/identity/register', { body: { displayName: 'Scout\u0007 Agent' } })
  t.equal(reg.status, 201)
  t.match(reg.body, { identityId: /^id_[0-9a-f]{20}$/, token: /^wim_/, verified: false, bits: 7, displayName: 'Scout Agent' })
  t.equal(reg.headers.get('cache-control'), 'no-store')
  const { token, identityId } = reg.body

  const ok = await net.call('POST', '/identity/verify', { token, body: { authority: 'board.example' } })
  t.equal(ok.status, 200)
  t.same(ok.body, { identityId, userId: null, displayName: 'Scout Agent', verified: false, bits: 7 })
  t.equal(
    (await net.call('POST', '/identity/verify', { token: `${token}x`, body: { authority: 'board.example' } })).status,
    401,
    'a wrong token: 401',
  )
  t.equal((await net.call('POST', '/identity/verify', { body: { authority: 'board.example' } })).status, 401, 'no token: 401')
  t.equal((await net.call('POST', '/identity/verify', { token, body: { authority: 'not an authority' } })).status, 400)

  // the board's resolver (libs/shared/auth/network.ts), unchanged, against this network
  const board = networkIdentity({ url: net.url, authority: 'board.example', log: createLogger('server', 'silent') })
  t.match(await board.authenticate(`Bearer ${token}`), {
    id: identityId,
    name: 'Scout Agent',
    verified: false,
    bits: 7,
    uri: `sw://${net.authority}/identities/${identityId}`,
  })
  const err = await board.authenticate('Bearer wim_nosuchtoken').catch((e: unknown) => e)
  t.ok(err instanceof WireError && err.code === 'unauthorized', 'an unknown token is unauthorized on the board')
  const fresh = await board.register() // MCP register_identity: {authority} → 2xx {token, identityId}
  t.match(fresh, { token: /^wim_/, identityId: /^id_/ })
  t.match(await board.authenticate(`Bearer ${fresh.token}`), { id: fresh.identityId, verified: false, bits: 7 })

  // stored as HMAC-SHA256 under the server key's hashing key, never as itself
  const rows = await net.sql<{ dump: string }>(`select row_to_json(i)::text as dump from identities i`)
  t.equal(rows.length, 2)
  t.notOk(
    rows.some((r) => r.dump.includes(token.slice(4)) || r.dump.includes(fresh.token.slice(4))),
    'no token in any row',
  )
  const hashKey = createHmac('sha256', SECRET).update('wire-identity:token-hash').digest()
  const [stored] = await net.sql<{ token_hash: Buffer }>(`select token_hash from identities where id = $1`, [identityId])
  t.same(stored!.token_hash, createHmac('sha256', hashKey).update(token).digest(), 'the keyed hash is what is stored')
  t.notOk(net.output().includes(token.slice(4)) || net.output().includes(fresh.token.slice(4)), 'no token in the logs (LOG_LEVEL=debug)')
})

t.test('derived tokens: one authority each, no other door, dead with their master token', async (t) => {
  const net = await startIdentityProcess(t)
  const { token: master, identityId } = (await net.call('POST', '/identity/register', { body: {} })).body
  const d = await net.call('POST', '/identity/tokens/derive', { token: master, body: { authority: 'Board-A.Example:08080', ttl: 600 } })
  t.equal(d.status, 200)
  t.match(d.body, { token: /^wid_/, authority: 'board-a.example:8080', identityId })
  t.ok(Math.abs(Date.parse(d.body.expiresAt) - Date.now() - 600_000) < 5000, 'expiresAt is ttl from now')
  const derived = d.body.token

  const verify = (token: string, authority: string) => net.call('POST', '/identity/verify', { token, body: { authority } })
  t.equal((await verify(derived, 'board-a.example:8080')).status, 200, 'honoured for its authority')
  t.equal((await verify(derived, 'BOARD-A.example:8080')).status, 200, 'canonicalised: host case does not matter')
  t.equal((await verify(derived, 'board-b.example:8080')).status, 403, 'not for another host')
  t.equal((await verify(derived, 'board-a.example')).status, 403, 'not without the port')
  t.equal((await verify(derived, 'board-a.example:8081')).status, 403, 'not for another port')
  t.equal((await verify(master, 'board-b.example')).status, 200, 'the master token is honoured everywhere')

  t.equal(
    (await net.call('POST', '/identity/tokens/derive', { token: derived, body: { authority: 'x.example', ttl: 60 } })).status,
    403,
    'a derived token cannot derive',
  )
  t.equal((await net.call('GET', '/identity/balance', { token: derived })).status, 403, 'nor read the balance')
  t.equal((await net.call('POST', '/bits/transfer', { token: derived, body: { to: identityId, amount: 1 } })).status, 403, 'nor move bits')
  const tampered = derived.slice(0, -2) + (derived.endsWith('A') ? 'B' : 'A') + derived.slice(-1)
  t.equal((await verify(tampered, 'board-a.example:8080')).status, 401, 'a changed signature: 401')
  for (const ttl of [59, 86_401, 1.5])
    t.equal(
      (await net.call('POST', '/identity/tokens/derive', { token: master, body: { authority: 'a.example', ttl } })).status,
      400,
      `ttl ${ttl} refused`,
    )

  const rotated = await net.call('POST', '/identity/tokens/rotate', { token: master })
  t.equal(rotated.status, 200)
  t.match(rotated.body, { identityId, token: /^wim_/ })
  t.equal((await verify(master, 'board-a.example:8080')).status, 401, 'the old master token is revoked')
  t.equal((await verify(derived, 'board-a.example:8080')).status, 401, 'and every token derived from it')
  t.equal((await verify(rotated.body.token, 'board-a.example:8080')).status, 200, 'the new one works')
})

t.test('registration: per-address throttle, the hourly valve, and 0 closing the tier', async (t) => {
  const throttled = await startIdentityProcess(t, { REGISTER_RATE_LIMIT_MAX: '3' })
  const codes = []
  for (let i = 0; i < 4; i++) codes.push((await throttled.call('POST', '/identity/register', { body: {} })).status)
  t.same(codes, [201, 201, 201, 429], 'the fourth from one address in an hour is refused')

  const valved = await startIdentityProcess(t, { REGISTER_RATE_LIMIT_MAX: '0', IDENTITY_REGISTER_HOURLY_MAX: '2' })
  const v = []
  for (let i = 0; i < 3; i++) v.push(await valved.call('POST', '/identity/register', { body: {} }))
  t.same(
    v.map((r) => r.status),
    [201, 201, 429],
    'the valve closes after 2 per hour, network-wide',
  )
  t.equal(v[2]!.body.error.code, 'rate_limited')
  t.ok(Number(v[2]!.headers.get('retry-after')) > 0, 'with Retry-After')

  const closed = await startIdentityProcess(t, { IDENTITY_REGISTER_HOURLY_MAX: '0' })
  const c = await closed.call('POST', '/identity/register', { body: {} })
  t.equal(c.status, 403, 'IDENTITY_REGISTER_HOURLY_MAX=0 closes the instant tier')
})

t.test('per-identity budget on token doors', async (t) => {
  const net = await startIdentityProcess(t, { IDENTITY_CALLS_RATE_LIMIT_MAX: '3' })
  const { token } = (await net.call('POST', '/identity/register', { body: {} })).body
  const codes = []
  for (let i = 0; i < 4; i++) codes.push((await net.call('POST', '/identity/verify', { token, body: { authority: 'b.example' } })).status)
  t.same(codes, [200, 200, 200, 429])
  const other = (await net.call('POST', '/identity/register', { body: {} })).body.token
  t.equal((await net.call('GET', '/identity/balance', { token: other })).status, 200, 'another identity has its own budget')
})

t.test('cards: asserted body, standing stamped at read time; RFC 8414 metadata; probes', async (t) => {
  const net = await startIdentityProcess(t, { PUBLIC_WIRE_URL: 'https://identity.example' })
  const { token, identityId } = (await net.call('POST', '/identity/register', { body: { displayName: 'Carder' } })).body
  const standingUri = 'https://identity.example/extensions/standing/v1'
  const first = await net.call('GET', `/identities/${identityId}/card`)
  t.equal(first.status, 200)
  t.match(first.body, {
    name: 'Carder',
    capabilities: { extensions: [{ uri: standingUri, params: { identityId, verified: false, bits: 10 } }] },
  })
  const forged = { uri: standingUri, params: { verified: true, bits: 1e9 } }
  const put = await net.call('PUT', '/identity/card', {
    token,
    body: {
      name: 'Carder v2',
      description: 'finds things',
      url: 'https://agent.example/a2a',
      capabilities: { streaming: true, extensions: [forged, { uri: 'https://x.example/ext' }] },
    },
  })
  t.equal(put.status, 200)
  const card = (await net.call('GET', `/identities/${identityId}/card`)).body
  t.match(card, { name: 'Carder v2', description: 'finds things', capabilities: { streaming: true } })
  t.same(
    card.capabilities.extensions.map((e: { uri: string }) => e.uri),
    ['https://x.example/ext', standingUri],
    'the forged standing is replaced by the network’s',
  )
  t.match(card.capabilities.extensions[1].params, { verified: false, bits: 10 })
  t.equal((await net.call('PUT', '/identity/card', { token, body: { description: 'no name' } })).status, 400)
  t.equal((await net.call('GET', '/identities/id_nosuch/card')).status, 404)

  const meta = await net.call('GET', '/.well-known/oauth-authorization-server')
  t.match(meta.body, {
    issuer: 'https://identity.example',
    agent_auth: {
      register_endpoint: 'https://identity.example/identity/register',
      verify_endpoint: 'https://identity.example/identity/verify',
    },
  })
  for (const path of ['/healthz', '/readyz']) t.equal((await net.call('GET', path)).status, 200, path)
  const metrics = await fetch(`${net.url}/metrics`).then((r) => r.text())
  t.match(metrics, /wire_identity_events_total\{event="registered"\} 1/)
})
