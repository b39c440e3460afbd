import t from 'tap'
import { loadConfig } from '../../libs/shared/config/index.js'
import { startStack } from '../helpers/stack.js'
import { until } from '../helpers/wait.js'
import { secondReader, secondWriter } from './more-roles.js'

const jsonOf = (r: Response): Promise<any> => r.json()

// Per-client-address budgets, shared by every process on the same Redis: reads, waiting
// long-polls and publishes (whatever the tokens), local mode's board-wide budget for identities
// never seen before, and TRUST_PROXY deciding which address a request counts against.

const read = (app: { inject: (...args: never[]) => unknown }, ip: string, headers: Record<string, string> = {}) =>
  (app.inject as (o: object) => Promise<{ statusCode: number; json: () => any; headers: Record<string, unknown> }>)({
    url: '/sw/signals',
    remoteAddress: ip,
    headers,
  })

t.test('reads per address, across two readers', async (t) => {
  const s = await startStack(t, { env: { READ_RATE_LIMIT_MAX: '6' } })
  const other = await secondReader(t, s)
  const codes: number[] = []
  for (let i = 0; i < 6; i++) codes.push((await read(i % 2 ? other : s.app, '198.51.100.1')).statusCode)
  t.same(codes, [200, 200, 200, 200, 200, 200], 'the budget, taken on either reader')
  const over = await read(other, '198.51.100.1')
  t.equal(over.statusCode, 429)
  t.equal(over.json().error.code, 'rate_limited')
  t.ok(Number(over.headers['retry-after']) >= 1, 'Retry-After')
  t.equal((await read(s.app, '198.51.100.1')).statusCode, 429, 'on both readers')
  t.equal((await read(s.app, '198.51.100.2')).statusCode, 200, 'another address has its own budget')
  t.equal((await s.app.inject({ url: '/healthz', remoteAddress: '198.51.100.1' })).statusCode, 200, 'health is not a read')
  t.match((await s.app.inject({ url: '/metrics' })).body, /wire_refused_total\{reason="reads"\} [1-9]/, 'refusals are counted')
})

t.test('TRUST_PROXY decides whose address counts', async (t) => {
  const behind = await startStack(t, { env: { READ_RATE_LIMIT_MAX: '2', TRUST_PROXY: '1' } })
  const xff = (client: string) => ({ 'x-forwarded-for': client })
  for (let i = 0; i < 2; i++) t.equal((await read(behind.app, '10.0.0.9', xff('203.0.113.7'))).statusCode, 200)
  t.equal((await read(behind.app, '10.0.0.9', xff('203.0.113.7'))).statusCode, 429, 'the forwarded client is limited')
  t.equal((await read(behind.app, '10.0.0.9', xff('203.0.113.8'))).statusCode, 200, 'another client behind the same proxy is not')

  const direct = await startStack(t, { env: { READ_RATE_LIMIT_MAX: '2' } })
  for (let i = 0; i < 2; i++) t.equal((await read(direct.app, '10.0.0.9', xff(`203.0.113.${i}`))).statusCode, 200)
  t.equal(
    (await read(direct.app, '10.0.0.9', xff('203.0.113.99'))).statusCode,
    429,
    'off by default: a forged X-Forwarded-For changes nothing',
  )
  t.same(loadConfig({ TRUST_PROXY: '10.0.0.0/8, 2001:db8::/32' }).http.trustProxy, ['10.0.0.0/8', '2001:db8::/32'], 'a CIDR list')
  t.equal(loadConfig({ TRUST_PROXY: '2' }).http.trustProxy, 2, 'a hop count')
  t.throws(() => loadConfig({ TRUST_PROXY: '10.0.0.0/99' }), /TRUST_PROXY/, 'a bad CIDR is refused')
})

t.test('waiting long-polls per address: past the cap 429 at once, the waiting ones get their signal', async (t) => {
  const s = await startStack(t, { env: { LONG_POLLS_PER_ADDRESS_MAX: '2' } })
  await s.app.listen({ host: '127.0.0.1', port: 0 })
  const base = `http://127.0.0.1:${(s.app.server.address() as { port: number }).port}`
  const head = (await jsonOf(await fetch(`${base}/sw/signals`))).nextCursor
  const poll = (cursor = head) => fetch(`${base}/sw/signals?cursor=${cursor}&wait=20`)
  const waiting = [poll(), poll()]
  await until(async () => (await s.reader.ready()).waiting! >= 2, 5000, 'both polls waiting')
  const third = await poll()
  t.equal(third.status, 429)
  t.equal((await jsonOf(third)).error.code, 'rate_limited')
  t.ok(Number(third.headers.get('retry-after')) >= 1)
  t.equal((await fetch(`${base}/sw/signals?cursor=${head}`)).status, 200, 'a read that does not wait still passes')
  const sig = (await s.publish({ $type: 'broadcast', text: 'wake' })).json().signal
  let next = head
  for (const p of waiting) {
    const page = await jsonOf(await p)
    t.same(
      page.signals.map((x: { id: string }) => x.id),
      [sig.id],
      'a waiting poll gets the signal',
    )
    next = page.nextCursor
  }
  // the slots go back (asynchronously, to Redis) when the answers are sent
  const slotKey = `wire:${s.schema}:rl:client:poll:127.0.0.1`
  await until(async () => Number((await s.infra.redis!.get(slotKey)) ?? 0) <= 0, 5000, 'the poll slots given back')
  const again = poll(next)
  await until(async () => (await s.reader.ready()).waiting! >= 1, 5000, 'the poll waiting')
  const sig2 = (await s.publish({ $type: 'broadcast', text: 'again' })).json().signal
  t.equal((await jsonOf(await again)).signals[0].id, sig2.id, 'slots are given back when polls end')
})

t.test('publishes per address, whatever the tokens, across two writers', async (t) => {
  const s = await startStack(t, { env: { PUBLISH_ADDRESS_RATE_LIMIT_MAX: '4', NEW_IDENTITY_RATE_LIMIT_MAX: '0' } })
  const other = await secondWriter(t, s)
  const pub = (app: typeof other, i: number, ip = '192.0.2.1') =>
    app.inject({
      method: 'POST',
      url: '/sw/signals',
      remoteAddress: ip,
      headers: s.bearer(`fresh-token-${i}`),
      payload: { $type: 'broadcast', i },
    })
  const codes: number[] = []
  for (let i = 0; i < 5; i++) codes.push((await pub(i % 2 ? other : s.app, i)).statusCode)
  t.same(codes, [200, 200, 200, 200, 429])
  t.equal((await pub(s.app, 9, '192.0.2.2')).statusCode, 200, 'another address publishes')
  t.equal((await s.read()).signals.length, 5, 'every acknowledged publish is stored')
})

t.test('local mode: identities never seen before share one board-wide budget', async (t) => {
  const s = await startStack(t, { env: { NEW_IDENTITY_RATE_LIMIT_MAX: '3', PUBLISH_ADDRESS_RATE_LIMIT_MAX: '0' } })
  const other = await secondWriter(t, s)
  const pub = (app: typeof other, token: string, ip: string) =>
    app.inject({ method: 'POST', url: '/sw/signals', remoteAddress: ip, headers: s.bearer(token), payload: { $type: 'broadcast' } })
  const codes: number[] = []
  for (let i = 0; i < 4; i++) codes.push((await pub(i % 2 ? other : s.app, `new-identity-${i}`, `192.0.2.${10 + i}`)).statusCode)
  t.same(codes, [200, 200, 200, 429], 'three new identities, from any address, on any writer')
  const over = await pub(s.app, 'new-identity-9', '192.0.2.99')
  t.equal(over.json().error.code, 'rate_limited')
  t.equal(
    (await pub(other, 'new-identity-0', '192.0.2.50')).statusCode,
    200,
    'an identity that has published passes (known from the database)',
  )
  t.equal((await pub(s.app, 'new-identity-1', '192.0.2.51')).statusCode, 200)
})
