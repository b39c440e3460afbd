import t from 'tap'
import { startIdentity } from '../../apps/identity/app.js'
import { loadConfig } from '../../libs/shared/config/index.js'
import { createLogger } from '../../libs/shared/log/index.js'
import { assertServicesUp, dropSchema, TEST_DATABASE_URL, uniqueSchema } from '../helpers/services.js'
import { ADMIN } from './support.js'

// Every door of the identity network spends its caller's address budget before any work: with the
// budgets at one and spent, every route answers 429, except the probes (free on purpose, as on a board).

const SPENDER = '198.51.100.7'
const FREE = new Set(['GET /', 'HEAD /', 'GET /healthz', 'HEAD /healthz', 'GET /readyz', 'HEAD /readyz', 'OPTIONS *'])

t.test('with its budgets spent, an address is refused at every door', async (t) => {
  await assertServicesUp()
  const schema = uniqueSchema('idnb')
  t.teardown(() => dropSchema(schema))
  const cfg = loadConfig({
    DATABASE_URL: TEST_DATABASE_URL,
    IDENTITY_PG_SCHEMA: schema,
    SERVER_ADMIN_TOKEN: ADMIN,
    LOG_LEVEL: 'silent',
    READ_RATE_LIMIT_MAX: '1',
    IDENTITY_VERIFY_RATE_LIMIT_MAX: '1',
  })
  const started = await startIdentity(cfg, createLogger('identity', 'silent'))
  t.teardown(() => started.close())
  const call = (method: string, url: string) =>
    started.app.inject({
      method: method as 'GET',
      url,
      remoteAddress: SPENDER,
      headers: { 'content-type': 'application/json', authorization: 'Bearer wim_x' },
      payload: method === 'GET' || method === 'HEAD' ? undefined : '{}',
    })
  t.equal((await call('GET', '/identity/balance')).statusCode, 401, 'the one request of the window')
  t.equal((await call('POST', '/identity/verify')).statusCode, 400, 'the one verify of the window')
  const ROUTES = [
    'POST /identity/register',
    'POST /identity/verify',
    'POST /identity/tokens/derive',
    'POST /identity/tokens/rotate',
    'GET /identity/balance',
    'POST /bits/transfer',
    'PUT /identity/card',
    'GET /identities/x/card',
    'GET /.well-known/oauth-authorization-server',
    'GET /metrics',
    'POST /admin/accounts',
    'POST /admin/accounts/x/credential',
    'GET /accounts/identities',
    'POST /accounts/identities',
    'POST /accounts/claim',
    'POST /accounts/identities/x/token',
  ]
  for (const r of ROUTES) {
    const [method, url] = r.split(' ') as [string, string]
    t.equal((await call(method, url)).statusCode, 429, `${r}: refused`)
  }
  for (const r of FREE)
    if (!r.startsWith('OPTIONS')) t.equal((await call(...(r.split(' ') as [string, string]))).statusCode, 200, `${r}: free`)
})
