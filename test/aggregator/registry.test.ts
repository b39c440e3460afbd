import t from 'tap'
import { recheckDeps } from '../../apps/aggregator/rechecks.js'
import { recheckBoards } from '../../apps/aggregator/registry/recheck.js'
import { httpServer } from '../client/support.js'
import { freePort } from '../helpers/process.js'
import { TEST_DATABASE_URL } from '../helpers/services.js'
import { ADMIN, auth, startTestAggregator, startTestBoard, TOKEN } from './support.js'
import pg from 'pg'

// Registration against real boards and real small HTTP servers that misbehave in each way.

const json = async (r: Promise<Response>): Promise<any> => (await r).json()

const discovery = (authority: string, over: Record<string, unknown> = {}) => ({
  protocol: 'wire',
  version: '1',
  subwires: [{ authority, uri: `sw://${authority}`, name: 'fake', description: null }],
  features: ['signals'],
  limits: { ttlMin: 10, ttlMax: 86400, maxPayloadBytes: 16384, maxLimit: 100 },
  ...over,
})

t.test('three boards register; the listing pages, filters and shows each', async (t) => {
  const boards = await Promise.all([startTestBoard(t), startTestBoard(t), startTestBoard(t)])
  const agg = await startTestAggregator(t, {}, { follow: false })
  for (const b of boards) {
    const r = await agg.register(`${b.url}/`)
    t.equal(r.status, 201, 'registered')
    t.match(r.body.board, {
      authority: b.authority,
      uri: `sw://${b.authority}`,
      url: b.url,
      proxy: `${agg.url}/sw/${b.authority}`,
      status: 'up',
      name: 'main',
    })
    t.ok(r.body.board.features.includes('signals'), 'features recorded')
    t.equal(r.body.board.limits.maxLimit, 100, 'limits recorded')
  }
  t.equal((await agg.register(boards[0]!.url)).status, 200, 'registering the same board again refreshes it')
  const page1 = await json(fetch(`${agg.url}/registry/boards?limit=2`))
  t.same(
    page1.boards.map((b: any) => b.authority),
    boards.slice(0, 2).map((b) => b.authority),
    'first page, in registration order',
  )
  const page2 = await json(fetch(`${agg.url}/registry/boards?limit=2&cursor=${page1.nextCursor}`))
  t.same(
    page2.boards.map((b: any) => b.authority),
    [boards[2]!.authority],
    'the cursor resumes',
  )
  t.equal((await json(fetch(`${agg.url}/registry/boards?feature=mcp`))).boards.length, 3, 'filter by feature')
  t.equal((await json(fetch(`${agg.url}/registry/boards?feature=nothing`))).boards.length, 0)
  t.equal((await json(fetch(`${agg.url}/registry/boards?name=MAI`))).boards.length, 3, 'filter by name, any case')
  const one = await fetch(`${agg.url}/registry/boards/${boards[1]!.authority}`)
  t.equal(((await one.json()) as any).board.authority, boards[1]!.authority)
  const none = await fetch(`${agg.url}/registry/boards/nowhere.example`)
  t.equal(none.status, 404)
  t.equal(((await none.json()) as any).error.code, 'not_found')
})

t.test('every bad registration is a 4xx with its reason, never a 5xx', async (t) => {
  const board = await startTestBoard(t)
  const agg = await startTestAggregator(
    t,
    { AGGREGATOR_FETCH_TIMEOUT_MS: '300', AGGREGATOR_DISCOVERY_MAX_BYTES: '4096' },
    { follow: false },
  )
  const serve = (body: (self: string) => { status?: number; headers?: Record<string, string>; body?: string; hang?: boolean }) => {
    let self = ''
    return httpServer(t, (_req, res) => {
      const a = body(self)
      if (a.hang) return // never answers
      res.writeHead(a.status ?? 200, { 'content-type': 'application/json', ...a.headers })
      res.end(a.body ?? '')
    }).then((s) => ((self = s.url), s.url))
  }
  const cases: Array<[string, string, number]> = [
    ['not wire', await serve(() => ({ body: JSON.stringify({ protocol: 'other', version: '1' }) })), 400],
    ['not JSON', await serve(() => ({ body: '<html>' })), 400],
    ['wrong version', await serve((u) => ({ body: JSON.stringify(discovery(new URL(u).host, { version: '2' })) })), 400],
    ['redirect loop', await serve((u) => ({ status: 302, headers: { location: `${u}/.well-known/wire` } })), 400],
    ['too large', await serve((u) => ({ body: JSON.stringify(discovery(new URL(u).host, { pad: 'x'.repeat(5000) })) })), 400],
    ['too slow', await serve(() => ({ hang: true })), 400],
    ['authority taken', `${await serve((u) => ({ body: JSON.stringify(discovery(new URL(u).host)) }))}/b`, 400],
  ]
  t.equal((await agg.register(board.url)).status, 201, 'the real board first')
  t.equal(
    (await agg.register(cases.at(-1)![1].replace(/\/b$/, '/a'))).status,
    201,
    'a board at one base path of a server; the same authority at another is taken',
  )
  const reasons: Record<string, string> = {
    'not wire': 'not_wire',
    'not JSON': 'not_wire',
    'wrong version': 'wrong_version',
    'redirect loop': 'redirect_loop',
    'too large': 'too_large',
    'too slow': 'too_slow',
    'authority taken': 'authority_taken',
  }
  for (const [what, url, status] of cases) {
    const r = await agg.register(url)
    t.equal(r.status, status, `${what}: ${status}`)
    t.match(
      r.body,
      { error: { code: 'invalid_request', message: String, details: { reason: reasons[what] } } },
      `${what}: ${reasons[what]}`,
    )
  }
  // a port nothing listens on
  const port = await freePort()
  const unreachable = await agg.register(`http://127.0.0.1:${port}`)
  t.match(unreachable, { status: 400, body: { error: { details: { reason: 'unreachable' } } } }, 'unreachable')
  t.match(await agg.register('ftp://example.com'), { status: 400, body: { error: { details: { reason: 'invalid_url' } } } }, 'not http(s)')
  t.match(await agg.register('not a url'), { status: 400, body: { error: { code: 'invalid_request' } } })
  const noToken = await fetch(`${agg.url}/registry/boards`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ url: board.url }),
  })
  t.equal(noToken.status, 401, 'a bearer token is required')
  t.equal(((await noToken.json()) as any).error.code, 'unauthorized')
  t.equal((await fetch(`${agg.url}/registry/boards`, { method: 'POST', headers: auth(), body: 'x' })).status, 400, 'no JSON body')
  const metrics = await (await fetch(`${agg.url}/metrics`)).text()
  for (const reason of ['not_wire', 'redirect_loop', 'too_slow', 'unreachable'])
    t.match(metrics, new RegExp(`wire_aggregator_registrations_total\\{outcome="${reason}"\\} [1-9]`), `counted: ${reason}`)
})

t.test('without AGGREGATOR_ALLOW_HOSTS a loopback board is refused, by address, by name and after a redirect', async (t) => {
  const board = await startTestBoard(t)
  const strict = await startTestAggregator(t, { AGGREGATOR_ALLOW_HOSTS: '' }, { follow: false })
  const privateOf = async (url: string) => (await strict.register(url)).body?.error?.details?.reason
  t.equal(await privateOf(board.url), 'private_address', '127.0.0.1')
  t.equal(await privateOf(`http://localhost:${board.port}`), 'private_address', 'a name that resolves to loopback')
  t.equal(await privateOf(`http://[::ffff:127.0.0.1]:${board.port}`), 'private_address', 'IPv4-mapped IPv6')
  t.equal(await privateOf(`http://[::1]:${board.port}`), 'private_address', 'IPv6 loopback')
  t.equal(await privateOf(`http://10.0.0.1:${board.port}`), 'private_address', 'a private network')
  t.equal(await privateOf(`http://169.254.169.254`), 'private_address', 'link-local (cloud metadata)')
  // a name opened deliberately may redirect, but the redirect's target is judged again
  const opened = await startTestAggregator(t, { AGGREGATOR_ALLOW_HOSTS: 'localhost' }, { follow: false })
  const redirector = await httpServer(t, (_req, res) => (res.writeHead(302, { location: `${board.url}/.well-known/wire` }), res.end()))
  const viaName = `http://localhost:${new URL(redirector.url).port}`
  t.equal((await opened.register(viaName)).body?.error?.details?.reason, 'private_address', 'redirect to a private address')
  t.equal((await strict.register(board.url)).status, 400)
})

t.test('an operator removes a board and blocks an authority; the registry refuses it after', async (t) => {
  const board = await startTestBoard(t)
  const agg = await startTestAggregator(t, {}, { follow: false })
  t.equal((await agg.register(board.url)).status, 201)
  const del = (path: string, token: string) => fetch(`${agg.url}${path}`, { method: 'DELETE', headers: auth(token) })
  t.equal((await del(`/registry/boards/${board.authority}`, TOKEN)).status, 401, 'not with any token')
  t.equal((await del(`/registry/boards/${board.authority}`, ADMIN)).status, 204, 'removed')
  t.equal((await fetch(`${agg.url}/registry/boards/${board.authority}`)).status, 404)
  t.equal((await agg.register(board.url)).status, 201, 'may register again')
  const block = await fetch(`${agg.url}/registry/blocked`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...auth(ADMIN) },
    body: JSON.stringify({ authority: board.authority }),
  })
  t.equal(block.status, 201)
  t.equal((await fetch(`${agg.url}/registry/boards/${board.authority}`)).status, 404, 'blocking removes the board')
  t.match(await agg.register(board.url), { status: 403, body: { error: { code: 'forbidden', details: { reason: 'blocked' } } } })
  t.equal((await del(`/registry/blocked/${board.authority}`, ADMIN)).status, 204, 'unblocked')
  t.equal((await agg.register(board.url)).status, 201)
})

t.test('registration is budgeted per identity and per address', async (t) => {
  const board = await startTestBoard(t)
  const agg = await startTestAggregator(t, { AGGREGATOR_REGISTER_RATE_LIMIT_MAX: '2' }, { follow: false })
  t.equal((await agg.register(board.url, 'identity-one-token')).status, 201)
  t.equal((await agg.register(board.url, 'identity-one-token')).status, 200)
  const third = await fetch(`${agg.url}/registry/boards`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...auth('identity-two-token') },
    body: JSON.stringify({ url: board.url }),
  })
  t.equal(third.status, 429, 'the address is over its budget, whatever the token')
  t.ok(Number(third.headers.get('retry-after')) >= 1, 'with Retry-After')
})

t.test('a board that stops answering is marked down after a while, then dropped; both show in the listing', async (t) => {
  const board = await startTestBoard(t)
  const agg = await startTestAggregator(
    t,
    { AGGREGATOR_DOWN_AFTER_SECONDS: '60', AGGREGATOR_DROP_AFTER_SECONDS: '3600', AGGREGATOR_FETCH_TIMEOUT_MS: '500' },
    { follow: false },
  )
  t.equal((await agg.register(board.url)).status, 201)
  const ctx = agg.started().ctx
  const recheck = () => recheckBoards(recheckDeps(ctx, ctx.log, 500), new AbortController().signal)
  t.match(await recheck(), { up: 1 })
  await board.stop()
  t.match(await recheck(), { up: 1 }, 'a first failure leaves it up (not failed for long)')
  const db = new pg.Client({ connectionString: TEST_DATABASE_URL })
  await db.connect()
  t.teardown(() => db.end())
  const backdate = (seconds: number) =>
    db.query(`update "${agg.cfg.aggregator.schema}".registered_boards set last_ok_at = now() - $1::int * interval '1 second'`, [seconds])
  await backdate(120)
  t.match(await recheck(), { down: 1 })
  const listed = await json(fetch(`${agg.url}/registry/boards`))
  t.match(listed.boards, [{ authority: board.authority, status: 'down' }], 'down, in the listing')
  const proxied = await fetch(`${agg.url}/sw/${board.authority}/sw/signals`)
  t.equal(proxied.status, 503, 'the proxy says the board is down')
  t.ok(Number(proxied.headers.get('retry-after')) >= 1, 'with Retry-After')
  await board.start()
  t.match(await recheck(), { up: 1 }, 'back up')
  await board.stop()
  await backdate(7200)
  t.match(await recheck(), { dropped: 1 })
  t.match(
    (await json(fetch(`${agg.url}/registry/boards`))).boards,
    [{ authority: board.authority, status: 'dropped' }],
    'dropped, in the listing',
  )
  t.same((await json(fetch(`${agg.url}/registry/boards?status=up`))).boards, [], 'and not among the boards up')
  t.equal((await fetch(`${agg.url}/sw/${board.authority}/sw/signals`)).status, 404, 'no longer proxied')
  t.match(await recheck(), { up: 0, down: 0, dropped: 0 }, 'no longer checked')
  await board.start()
  t.match(await agg.register(board.url), { status: 200, body: { board: { status: 'up' } } }, 'registering it again revives it')
})
