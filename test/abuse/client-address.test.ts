import type { AddressInfo } from 'node:net'
import t from 'tap'
import { ADDRESS_KEY_MAX_CHARS, addressKey } from '../../libs/shared/limits/index.js'
import { startStack } from '../helpers/stack.js'

// One client, one budget: an IPv6 client counts by its /64 (CLIENT_IPV6_PREFIX_BITS), an
// IPv4-mapped address as its IPv4 address; X-Forwarded-For counts only behind TRUST_PROXY (and
// the operator is told when requests carry it while TRUST_PROXY is off), through the fast path
// (real sockets) and fastify alike.

t.test('addressKey: IPv4 exact, IPv4-mapped as IPv4, IPv6 by prefix', async (t) => {
  t.equal(addressKey('203.0.113.7', 64), '203.0.113.7')
  t.equal(addressKey('::ffff:203.0.113.7', 64), '203.0.113.7')
  t.equal(addressKey('2001:db8:1:2::a', 64), addressKey('2001:db8:1:2:ffff:1:2:3', 64), 'one /64')
  t.not(addressKey('2001:db8:1:2::a', 64), addressKey('2001:db8:1:3::a', 64), 'another /64')
  t.equal(addressKey('2001:db8:1:2::a', 48), addressKey('2001:db8:1:3::a', 48), 'a /48 when told')
  t.not(addressKey('2001:db8::1', 128), addressKey('2001:db8::2', 128), '128 bits: exact')
  t.equal(addressKey('fe80::1%eth0', 64), addressKey('fe80::2', 64), 'a zone index names no client')
  t.equal(addressKey('unknown', 64), 'unknown')
  // what a client may write into X-Forwarded-For under TRUST_PROXY=true: every map keyed by it stays small
  const long = (c: string) => `${c.repeat(8000)}:1`
  t.ok(addressKey(long('a'), 64).length <= ADDRESS_KEY_MAX_CHARS, 'a whole header of address is a short key')
  t.equal(addressKey(long('a'), 64), addressKey(long('a'), 64), 'the same one, the same key')
  t.not(addressKey(long('a'), 64), addressKey(long('b'), 64), 'another, another key')
})

const get = (port: number, forwardedFor?: string) =>
  fetch(`http://127.0.0.1:${port}/sw/signals?limit=1`, { headers: forwardedFor ? { 'x-forwarded-for': forwardedFor } : {} }).then(
    (r) => r.status,
  )

t.test('addresses in one IPv6 /64 share a budget (behind a trusted proxy, over real sockets)', async (t) => {
  const s = await startStack(t, { env: { READ_RATE_LIMIT_MAX: '3', TRUST_PROXY: '1' } })
  await s.app.listen({ port: 0, host: '127.0.0.1' })
  const port = (s.app.server.address() as AddressInfo).port
  const codes = []
  for (const a of ['2001:db8:7:1::1', '2001:db8:7:1::2', '2001:db8:7:1:abcd::3', '2001:db8:7:1::4']) codes.push(await get(port, a))
  t.same(codes, [200, 200, 200, 429], "the fourth address of the /64 is over the /64's budget")
  t.equal(await get(port, '2001:db8:7:2::1'), 200, 'the next /64 has its own')
  t.equal(await get(port, '198.51.100.20'), 200)
  t.equal(await get(port, '::ffff:198.51.100.20'), 200)
  t.equal(await get(port, '198.51.100.20'), 200)
  t.equal(await get(port, '::ffff:198.51.100.20'), 429, 'an IPv4-mapped address is its IPv4 address')
})

t.test('without TRUST_PROXY, X-Forwarded-For is ignored and the operator is warned', async (t) => {
  const s = await startStack(t, { env: { READ_RATE_LIMIT_MAX: '2' } })
  await s.app.listen({ port: 0, host: '127.0.0.1' })
  const port = (s.app.server.address() as AddressInfo).port
  t.equal(await get(port, '203.0.113.1'), 200)
  t.equal(await get(port, '203.0.113.2'), 200)
  t.equal(await get(port, '203.0.113.3'), 429, 'every "client" spends the one socket address\'s budget')
  t.ok(
    s.logs.some((l) => l.includes('TRUST_PROXY is off')),
    'a warning names the setting',
  )
  t.equal(s.logs.filter((l) => l.includes('TRUST_PROXY is off')).length, 1, 'once, not per request')
  t.equal(
    (await s.app.inject({ url: '/sw/signals', remoteAddress: '192.0.2.9', headers: { 'x-forwarded-for': '203.0.113.9' } })).statusCode,
    200,
    'fastify: the socket address counts',
  )
  t.equal(
    (await s.app.inject({ url: '/sw/signals', remoteAddress: '192.0.2.9', headers: { 'x-forwarded-for': '203.0.113.10' } })).statusCode,
    200,
  )
  t.equal(
    (await s.app.inject({ url: '/sw/signals', remoteAddress: '192.0.2.9', headers: { 'x-forwarded-for': '203.0.113.11' } })).statusCode,
    429,
  )
})

t.test('TRUST_PROXY=2: the client is the address two hops in', async (t) => {
  const s = await startStack(t, { env: { READ_RATE_LIMIT_MAX: '2', TRUST_PROXY: '2' } })
  await s.app.listen({ port: 0, host: '127.0.0.1' })
  const port = (s.app.server.address() as AddressInfo).port
  t.equal(await get(port, '198.51.100.50, 10.1.1.1'), 200)
  t.equal(await get(port, '198.51.100.50, 10.1.1.2'), 200, 'another first proxy, the same client')
  t.equal(await get(port, '198.51.100.50, 10.1.1.3'), 429, "the client's budget, whichever proxy relayed it")
  t.equal(await get(port, '192.0.2.77, 198.51.100.50, 10.1.1.1'), 429, 'a hop the client forged before itself changes nothing')
  t.equal(await get(port, '198.51.100.51, 10.1.1.1'), 200, 'another client')
})
