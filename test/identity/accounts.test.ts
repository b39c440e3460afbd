import t, { type Test } from 'tap'
import { startIdentity } from '../../apps/identity/app.js'
import { loadConfig } from '../../libs/shared/config/index.js'
import { createLogger } from '../../libs/shared/log/index.js'
import { manualClock } from '../helpers/clock.js'
import { assertServicesUp, dropSchema, TEST_DATABASE_URL, uniqueSchema } from '../helpers/services.js'
import { ADMIN } from './support.js'

// Accounts, claims, decay and derived tokens' expiry: the identity network in this process (so its
// clock is one the test drives), listening on a real socket, on PostgreSQL.

const DAY = 86_400_000

async function network(t: Test, env: Record<string, string> = {}) {
  await assertServicesUp()
  const schema = uniqueSchema('idna')
  t.teardown(() => dropSchema(schema))
  const clock = manualClock(Date.now())
  const cfg = loadConfig({
    DATABASE_URL: TEST_DATABASE_URL,
    IDENTITY_PG_SCHEMA: schema,
    SERVER_ADMIN_TOKEN: ADMIN,
    LOG_LEVEL: 'silent',
    IDENTITY_CLAIMED_GRANT_BITS: '100',
    IDENTITY_INSTANT_GRANT_BITS: '10',
    ...env,
  })
  const started = await startIdentity(cfg, createLogger('identity', 'silent'), { clock })
  t.teardown(() => started.close())
  const url = await started.app.listen({ host: '127.0.0.1', port: 0 })
  const call = async (method: string, path: string, o: { token?: string; body?: unknown } = {}) => {
    const res = await fetch(url + path, {
      method,
      headers: {
        ...(o.token && { authorization: `Bearer ${o.token}` }),
        ...(o.body !== undefined && { 'content-type': 'application/json' }),
      },
      ...(o.body !== undefined && { body: JSON.stringify(o.body) }),
    })
    const text = await res.text()
    return { status: res.status, body: text ? JSON.parse(text) : null }
  }
  const verify = (token: string, authority = 'board.example') => call('POST', '/identity/verify', { token, body: { authority } })
  const register = async () => (await call('POST', '/identity/register', { body: {} })).body as { identityId: string; token: string }
  return { started, clock, call, verify, register }
}

t.test('the operator makes accounts; an account claims an instant identity by its master token', async (t) => {
  const { call, verify, register } = await network(t)
  t.equal((await call('POST', '/admin/accounts', { body: { name: 'Acme' } })).status, 401, 'admin only')
  const made = await call('POST', '/admin/accounts', { token: ADMIN, body: { name: 'Acme' } })
  t.equal(made.status, 201)
  t.match(made.body, { accountId: /^acct_/, name: 'Acme', credential: /^wia_/ })
  const acct = made.body.credential as string

  const instant = await register()
  t.equal((await call('POST', '/accounts/claim', { token: 'wia_wrong', body: { token: instant.token } })).status, 401, 'a wrong credential')
  t.equal((await call('POST', '/accounts/claim', { token: acct, body: { token: 'wim_wrong' } })).status, 401, 'a wrong master token')
  t.equal(
    (await call('POST', '/accounts/claim', { token: instant.token, body: { token: instant.token } })).status,
    401,
    'a master token is no account credential',
  )
  const claimed = await call('POST', '/accounts/claim', { token: acct, body: { token: instant.token } })
  t.equal(claimed.status, 200)
  t.same(
    claimed.body,
    { identityId: instant.identityId, userId: made.body.accountId, displayName: null, verified: true, bits: 100 },
    'verified, topped up to the claimed grant',
  )
  t.same((await verify(instant.token)).body, claimed.body, 'verify says so too')
  t.equal((await call('POST', '/accounts/claim', { token: acct, body: { token: instant.token } })).status, 403, 'claimed once')

  const minted = await call('POST', '/accounts/identities', { token: acct, body: { displayName: 'Acme Bot' } })
  t.equal(minted.status, 201)
  t.match(minted.body, { identityId: /^id_/, verified: true, bits: 100, token: /^wim_/, userId: made.body.accountId })
  const list = await call('GET', '/accounts/identities', { token: acct })
  t.same(list.body.identities.map((i: { id: string }) => i.id).sort(), [instant.identityId, minted.body.identityId].sort())

  const rotated = await call('POST', `/accounts/identities/${minted.body.identityId}/token`, { token: acct })
  t.equal(rotated.status, 200)
  t.equal((await verify(minted.body.token)).status, 401, 'the account revoked the old master token')
  t.equal((await verify(rotated.body.token)).status, 200)
  const other = await call('POST', '/admin/accounts', { token: ADMIN, body: { name: 'Other' } })
  t.equal(
    (await call('POST', `/accounts/identities/${minted.body.identityId}/token`, { token: other.body.credential })).status,
    404,
    'not another account’s identity',
  )

  const newCred = await call('POST', `/admin/accounts/${made.body.accountId}/credential`, { token: ADMIN })
  t.equal((await call('GET', '/accounts/identities', { token: acct })).status, 401, 'the old credential stops working')
  t.equal((await call('GET', '/accounts/identities', { token: newCred.body.credential })).status, 200)
})

t.test('idle instant identities decay after 30 days without earning bits; claimed ones never', async (t) => {
  const { started, clock, call, verify, register } = await network(t)
  const idle = await register()
  const earner = await register()
  const acct = (await call('POST', '/admin/accounts', { token: ADMIN, body: { name: 'Keeper' } })).body.credential
  const kept = (await call('POST', '/accounts/identities', { token: acct, body: {} })).body

  clock.advance(20 * DAY) // the hourly sweep ticks on the way: nothing is 30 days idle yet
  t.equal(await started.decay.run(), 0)
  t.equal(
    (await call('POST', '/bits/transfer', { token: idle.token, body: { to: earner.identityId, amount: 1 } })).status,
    200,
    'the earner earns a bit on day 20',
  )
  clock.advance(10 * DAY + 60_000)
  await started.decay.run()
  t.equal((await verify(idle.token)).status, 401, 'idle for 30 days (sending is not earning): decayed')
  t.equal((await verify(earner.token)).status, 200, 'earned 10 days ago: alive')
  t.equal((await verify(kept.token)).status, 200, 'claimed identities never decay')
  t.equal((await call('GET', `/identities/${idle.identityId}/card`)).status, 404, 'a decayed identity has no card')
  const [sum] = (
    await started.ctx.db.query<{ balances: string; ledger: string }>(
      `select (select sum(bits) from ${started.ctx.schema}.identities) as balances, (select sum(delta) from ${started.ctx.schema}.ledger) as ledger`,
    )
  ).rows
  t.same(sum, { balances: '111', ledger: '111' }, 'the decayed balance left through the ledger (10 + 100 + 1)')

  clock.advance(20 * DAY)
  await started.decay.run()
  t.equal((await verify(earner.token)).status, 401, 'thirty days after it last earned, the earner decays too')
  t.equal(
    (await call('POST', '/accounts/claim', { token: acct, body: { token: earner.token } })).status,
    401,
    'a decayed identity cannot be claimed',
  )
})

t.test('a derived token expires with the clock', async (t) => {
  const { clock, call, verify, register } = await network(t)
  const { token } = await register()
  const d = (await call('POST', '/identity/tokens/derive', { token, body: { authority: 'board.example', ttl: 60 } })).body
  t.equal((await verify(d.token)).status, 200)
  clock.advance(59_000)
  t.equal((await verify(d.token)).status, 200, 'still valid within its ttl')
  clock.advance(1_000)
  t.equal((await verify(d.token)).status, 401, 'expired at expiresAt')
})
