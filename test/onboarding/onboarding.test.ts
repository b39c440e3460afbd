import t from 'tap'
import { startFakeIdentity } from '../helpers/fake-identity.js'
import { startStack, type Stack } from '../helpers/stack.js'

// Agent onboarding as the reference server offers it: /.well-known/oauth-protected-resource
// (RFC 9728), /auth.md and their links in discovery, in both identity modes; and the
// WWW-Authenticate challenge every 401 carries.

const get = async (s: Stack, url: string) => s.app.inject({ url })

t.test('local mode: the documents say any token of 8+ characters is an identity, and name no identity network', async (t) => {
  const s = await startStack(t, { env: { PUBLIC_WIRE_URL: 'https://board.example' } })
  const d = (await get(s, '/.well-known/wire')).json()
  t.match(d, {
    identityMode: 'local',
    identity: null,
    authmd: 'https://board.example/auth.md',
    oauthProtectedResource: 'https://board.example/.well-known/oauth-protected-resource',
    openapi: 'https://board.example/sw/openapi.json',
  })
  t.notOk('aggregator' in d, 'no aggregator unless AGGREGATOR_URL is set')

  const pr = await get(s, '/.well-known/oauth-protected-resource')
  t.equal(pr.statusCode, 200)
  t.same(
    pr.json(),
    {
      resource: 'https://board.example',
      bearer_methods_supported: ['header'],
      resource_documentation: 'https://board.example/auth.md',
      resource_name: 'main',
      'x-subwire-identity-mode': 'local',
    },
    'the resource is the origin (RFC 9728, a document at the root); no authorization_servers: tokens need no server in local mode',
  )

  const md = await get(s, '/auth.md')
  t.equal(md.statusCode, 200)
  t.match(md.headers['content-type'], /^text\/markdown/)
  t.match(md.body, /^# main: how agents authenticate/)
  t.match(md.body, /local identity mode/)
  t.match(md.body, /at\s+least 8 characters/)
  t.match(md.body, /Authorization: Bearer <token>/)
  t.match(md.body, /https:\/\/board\.example\/sw\/signals\?cursor=<nextCursor>&wait=25/)
  t.notMatch(md.body, /identity\/verify/)
})

t.test('network mode: authorization_servers is the identity network, and auth.md sends agents there', async (t) => {
  const fake = await startFakeIdentity(t, { 'tok-agent': { identityId: 'id_agent', verified: true, bits: 5 } })
  const s = await startStack(t, {
    env: { IDENTITY_URL: fake.url, PUBLIC_WIRE_HOST: 'board.example', AGGREGATOR_URL: 'https://agg.example/' },
  })
  const d = (await get(s, '/.well-known/wire')).json()
  t.match(d, { identityMode: 'network', identity: fake.url, authmd: 'https://board.example/auth.md', aggregator: 'https://agg.example' })
  t.same((await get(s, '/.well-known/oauth-protected-resource')).json(), {
    resource: 'https://board.example',
    authorization_servers: [fake.url],
    bearer_methods_supported: ['header'],
    resource_documentation: 'https://board.example/auth.md',
    resource_name: 'main',
    'x-subwire-identity-mode': 'network',
  })
  const md = (await get(s, '/auth.md')).body
  t.match(md, /network identity mode/)
  t.ok(md.includes(`POST ${fake.url}/identity/verify`), 'names the verify call on the configured network')
  t.match(md, /at least 1 bit/)
  t.notMatch(md, /8 characters/)
  t.equal((await get(s, '/sw/v1/openapi.json')).statusCode, 200, 'the OpenAPI document under /sw/v1 as well')
})

t.test('onboarding documents follow a rename, and never take the Host header', async (t) => {
  const s = await startStack(t)
  const patch = await s.app.inject({
    method: 'PATCH',
    url: '/sw/admin/wire',
    headers: { authorization: 'Bearer admin-secret-token' },
    payload: { name: 'agents' },
  })
  t.equal(patch.statusCode, 200)
  const md = await s.app.inject({ url: '/auth.md', headers: { host: 'evil.example' } })
  t.match(md.body, /^# agents: how agents authenticate/)
  t.notMatch(md.body, /evil\.example/)
  t.equal((await get(s, '/.well-known/oauth-protected-resource')).json().resource_name, 'agents')
  const card = await s.app.inject({ url: '/.well-known/agent-card.json' })
  t.match(card.json().name, /^agents /, 'the agent card carries the new name')
})

t.test('every 401 carries WWW-Authenticate: Bearer with the resource metadata', async (t) => {
  const s = await startStack(t, { env: { PUBLIC_WIRE_URL: 'https://board.example' } })
  const challenge = 'Bearer resource_metadata="https://board.example/.well-known/oauth-protected-resource"'
  const none = await s.app.inject({ method: 'POST', url: '/sw/signals', payload: { $type: 'broadcast' } })
  t.equal(none.statusCode, 401)
  t.equal(none.headers['www-authenticate'], challenge, 'publish without a token')
  const short = await s.publish({ $type: 'broadcast' }, 'short')
  t.equal(short.statusCode, 401)
  t.equal(short.headers['www-authenticate'], challenge, 'publish with a token too short for local mode')
  const admin = await s.app.inject({ url: '/sw/admin/wire', headers: { authorization: 'Bearer wrong-admin-token' } })
  t.equal(admin.statusCode, 401)
  t.equal(admin.headers['www-authenticate'], challenge, 'admin with a wrong token')
  const ok = await s.publish({ $type: 'broadcast' })
  t.equal(ok.statusCode, 200)
  t.notOk(ok.headers['www-authenticate'], 'a success carries no challenge')
})
