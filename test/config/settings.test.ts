import t from 'tap'
import { loadConfig } from '../../libs/shared/config/index.js'
import { startStack } from '../helpers/stack.js'

// Settings an operator copies over from the reference server mean what they meant there, and the
// derived defaults advertise links something serves.

t.test('PUBLISH_RATE_LIMIT_MAX=0 means no limit: publishes past 120 a minute all succeed', async (t) => {
  t.equal(loadConfig({ PUBLISH_RATE_LIMIT_MAX: '0' }).rateLimits.publishMax, 0, 'accepted at start')
  const s = await startStack(t, { env: { PUBLISH_RATE_LIMIT_MAX: '0' } })
  const statuses = new Map<number, number>()
  for (let round = 0; round < 13; round++) {
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => s.publish({ $type: 'broadcast', n: round * 10 + i })))
    for (const a of answers) statuses.set(a.statusCode, (statuses.get(a.statusCode) ?? 0) + 1)
  }
  t.same([...statuses], [[200, 130]], '130 publishes by one identity within the window, all 200')
})

t.test('a positive PUBLISH_RATE_LIMIT_MAX is still enforced', async (t) => {
  const s = await startStack(t, { env: { PUBLISH_RATE_LIMIT_MAX: '3' } })
  for (let i = 0; i < 3; i++) t.equal((await s.publish({ $type: 'broadcast' })).statusCode, 200)
  const refused = await s.publish({ $type: 'broadcast' })
  t.equal(refused.statusCode, 429, 'a positive limit is enforced (0 is not "the default")')
  t.equal(refused.json().error.code, 'rate_limited')
})

t.test('PUBLIC_WIRE_HOST on a loopback name or an IP address links with http://; a domain with https://', async (t) => {
  t.equal(loadConfig({ PUBLIC_WIRE_HOST: '127.0.0.1:4000' }).baseUrl, 'http://127.0.0.1:4000')
  t.equal(loadConfig({ PUBLIC_WIRE_HOST: '10.1.2.3' }).baseUrl, 'http://10.1.2.3')
  t.equal(loadConfig({ PUBLIC_WIRE_HOST: 'localhost:4600' }).baseUrl, 'http://localhost:4600')
  t.equal(loadConfig({ PUBLIC_WIRE_HOST: 'board.localhost' }).baseUrl, 'http://board.localhost')
  t.equal(loadConfig({ PUBLIC_WIRE_HOST: 'Board.Example:8443' }).baseUrl, 'https://board.example:8443')
  t.equal(
    loadConfig({ PUBLIC_WIRE_HOST: '127.0.0.1:4000', PUBLIC_WIRE_URL: 'https://wire.example/' }).baseUrl,
    'https://wire.example',
    'PUBLIC_WIRE_URL wins',
  )
  t.equal(loadConfig({ SERVER_PORT: '4100' }).baseUrl, 'http://localhost:4100')
})

t.test('WIRE_AUTO_MIGRATE: 0 disables, anything else migrates (the spec)', async (t) => {
  t.equal(loadConfig({ WIRE_AUTO_MIGRATE: '0' }).autoMigrate, false)
  for (const v of ['1', 'true', 'yes']) t.equal(loadConfig({ WIRE_AUTO_MIGRATE: v }).autoMigrate, true, v)
  t.equal(loadConfig({}).autoMigrate, true, 'unset')
})

t.test('AGGREGATOR_URL must be an http(s) URL', async (t) => {
  t.equal(loadConfig({ AGGREGATOR_URL: 'https://agg.example/' }).aggregatorUrl, 'https://agg.example')
  t.throws(() => loadConfig({ AGGREGATOR_URL: 'ftp://agg.example' }), /AGGREGATOR_URL/)
})

t.test('501 admin_disabled is not logged as an error', async (t) => {
  const s = await startStack(t, { env: { SERVER_ADMIN_TOKEN: '' } })
  const r = await s.app.inject({ url: '/sw/admin/wire', headers: { authorization: 'Bearer whatever-token' } })
  t.equal(r.statusCode, 501)
  t.equal(r.json().error.code, 'admin_disabled')
  const lines = s.logs.map((l) => JSON.parse(l) as { level: number; msg: string; err?: unknown })
  t.ok(lines.length > 0, 'the stack logs (at debug)')
  t.same(
    lines.filter((l) => l.level >= 50),
    [],
    'nothing at error level or above',
  )
  t.notOk(
    lines.some((l) => l.err),
    'no stack trace',
  )
})
