import { request } from 'node:http'
import pg from 'pg'
import t from 'tap'
import { addressPolicy } from '../../apps/aggregator/outbound/address-policy.js'
import { recheckDeps } from '../../apps/aggregator/rechecks.js'
import { recheckBoards } from '../../apps/aggregator/registry/recheck.js'
import { TEST_DATABASE_URL } from '../helpers/services.js'
import { startHostileBoard } from '../../bench/lib/hostile-board.js'
import { startTestAggregator, startTestBoard } from './support.js'

// The registry's rules against a registrant who probes them: dropped boards leave room and are
// forgotten, an authority is its URL's host and no reserved name, a path cannot leave the board's
// base path, and every IPv6 form that carries a private IPv4 address is private.

t.test('dropped boards do not count toward AGGREGATOR_MAX_BOARDS and are forgotten after the drop period', async (t) => {
  const [a, b] = [await startTestBoard(t), await startTestBoard(t)]
  const agg = await startTestAggregator(t, { AGGREGATOR_MAX_BOARDS: '1', AGGREGATOR_DROP_AFTER_SECONDS: '3600' }, { follow: false })
  const db = new pg.Client({ connectionString: TEST_DATABASE_URL })
  await db.connect()
  t.teardown(() => db.end())
  const s = agg.cfg.aggregator.schema
  t.equal((await agg.register(a.url)).status, 201)
  t.match(await agg.register(b.url), { status: 403, body: { error: { details: { reason: 'full' } } } }, 'full with one board')
  await db.query(`update "${s}".registered_boards set status = 'dropped' where authority = $1`, [a.authority])
  t.equal((await agg.register(b.url)).status, 201, 'a dropped board leaves its place')
  const ctx = agg.started().ctx
  t.match(
    await recheckBoards(recheckDeps(ctx, ctx.log, 2000), new AbortController().signal),
    { forgotten: 0 },
    'listed as dropped for a while',
  )
  t.equal((await fetch(`${agg.url}/registry/boards/${a.authority}`)).status, 200)
  await db.query(`update "${s}".registered_boards set checked_at = now() - interval '2 hours' where authority = $1`, [a.authority])
  t.match(await recheckBoards(recheckDeps(ctx, ctx.log, 2000), new AbortController().signal), { forgotten: 1 }, 'then forgotten')
  t.equal((await fetch(`${agg.url}/registry/boards/${a.authority}`)).status, 404, 'gone from the registry')
})

t.test("an authority must be its URL's host, and not a reserved name", async (t) => {
  const agg = await startTestAggregator(t, { AGGREGATOR_REGISTER_RATE_LIMIT_MAX: '0' }, { follow: false })
  const good = await startTestBoard(t)
  t.equal((await agg.register(good.url)).status, 201)
  const squatter = await startHostileBoard(t, 'html', { authority: 'bank.example' })
  t.match(
    await agg.register(squatter.url),
    { status: 400, body: { error: { details: { reason: 'authority_mismatch' } } } },
    "another host's name",
  )
  t.equal(
    (await fetch(`${agg.url}/registry/boards/bank.example`)).status,
    404,
    'not registered: a token sent to /sw/bank.example goes nowhere',
  )
  for (const name of ['..', 'sw', 'registry', 'a..b']) {
    const h = await startHostileBoard(t, 'html', { authority: name })
    t.match(await agg.register(h.url), { status: 400, body: { error: { details: { reason: 'invalid_authority' } } } }, `${name} is refused`)
  }
})

t.test("a proxied path cannot leave the board's registered base path", async (t) => {
  const h = await startHostileBoard(t, 'html')
  const agg = await startTestAggregator(t, {}, { follow: false })
  t.equal((await agg.register(`${h.url}/base`)).status, 201, 'registered at a base path')
  // sent as written (fetch would resolve the dot segments itself before sending)
  const raw = (path: string) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(`${agg.url}/`, { path }, (res) => {
        let body = ''
        res.on('data', (d: Buffer) => (body += d)).on('end', () => resolve({ status: res.statusCode!, body }))
      })
      req.on('error', reject).end()
    })
  for (const path of [
    '/%2e%2e/secret',
    '/sw/%2e%2e/%2e%2e/secret',
    '/sw/%2E%2E/%2E%2E/secret',
    '/.%2e/secret',
    '/sw/%2e%2E/secret',
    '/sw/%2e/x',
    '/sw/../../secret',
  ]) {
    const r = await raw(`/sw/${h.authority}${path}`)
    t.equal(r.status, 400, `${path} → 400`)
    t.equal(JSON.parse(r.body).error.code, 'invalid_request')
  }
  t.notOk(
    h.paths.some((p) => !p.startsWith('/base/')),
    `the board was only asked under /base (${h.paths.join(', ')})`,
  )
  t.equal((await fetch(`${agg.url}/sw/${h.authority}/sw/page`)).status, 200, 'an ordinary path goes through')
  t.ok(h.paths.includes('/base/sw/page'))
})

t.test('IPv6 forms that carry a private IPv4 address are private; the refusal names AGGREGATOR_ALLOW_HOSTS', async (t) => {
  const p = addressPolicy({ hosts: [], cidrs: [] })
  for (const a of ['::127.0.0.1', '::7f00:1', '::10.0.0.1', '::ffff:127.0.0.1', '64:ff9b::7f00:1', '64:ff9b:1::a00:1', '::169.254.169.254'])
    t.notOk(p.addressAllowed(a), `${a} is not public`)
  for (const a of ['2606:4700::1111', '8.8.8.8']) t.ok(p.addressAllowed(a), `${a} is`)
  const board = await startTestBoard(t)
  const strict = await startTestAggregator(t, { AGGREGATOR_ALLOW_HOSTS: '' }, { follow: false })
  const r = await strict.register(`http://[::127.0.0.1]:${board.port}`)
  t.match(r, { status: 400, body: { error: { details: { reason: 'private_address' } } } }, 'IPv4-compatible [::127.0.0.1]')
  t.match((await strict.register(board.url)).body.error.message, /AGGREGATOR_ALLOW_HOSTS/, 'the refusal says which setting opens it')
})
