import t from 'tap'
import { startIdentityProcess, type IdentityProcess } from './support.js'

// Bits on the identity network (a real process on PostgreSQL): transfers are atomic, exactly once
// per Idempotency-Key, and exact.

const GRANT = 20

async function register(net: IdentityProcess, n: number): Promise<Array<{ id: string; token: string }>> {
  const out = []
  for (let i = 0; i < n; i++) {
    const r = await net.call('POST', '/identity/register', { body: { displayName: `agent ${i}` } })
    out.push({ id: r.body.identityId as string, token: r.body.token as string })
  }
  return out
}

t.test('64 concurrent transfers between 8 identities, each sent three times with one key', async (t) => {
  const net = await startIdentityProcess(t, {
    IDENTITY_INSTANT_GRANT_BITS: String(GRANT),
    IDENTITY_CALLS_RATE_LIMIT_MAX: '0',
    REGISTER_RATE_LIMIT_MAX: '0',
  })
  const ids = await register(net, 8)
  const plan = Array.from({ length: 64 }, (_, i) => ({
    key: `key-${i}`,
    from: i % 8,
    to: ((i % 8) + 1 + ((i * 5) % 7)) % 8,
    amount: 1 + ((i * 7) % 15),
    memo: `payment ${i}`,
  }))
  t.ok(plan.every((p) => p.from !== p.to))
  const send = (p: (typeof plan)[number]) =>
    net.call('POST', '/bits/transfer', {
      token: ids[p.from]!.token,
      headers: { 'idempotency-key': p.key },
      body: { to: ids[p.to]!.id, amount: p.amount, memo: p.memo },
    })
  // every request at once, the three copies of one key interleaved with everyone else's
  const answers = await Promise.all([...plan, ...plan, ...plan].map(send))
  const byKey = new Map<string, Array<{ status: number; body: unknown }>>()
  answers.forEach((a, i) => {
    const k = plan[i % 64]!.key
    byKey.set(k, [...(byKey.get(k) ?? []), { status: a.status, body: a.body }])
  })
  t.ok(
    [...byKey.values()].every((as) => as.every((a) => JSON.stringify(a) === JSON.stringify(as[0]))),
    'every retry answers what the first answered',
  )
  t.ok(
    [...byKey.values()].every((as) => as[0]!.status === 200 || as[0]!.status === 402),
    'each transfer either moved or was refused for bits',
  )

  const expected = ids.map(() => GRANT)
  let moved = 0
  plan.forEach((p) => {
    if (byKey.get(p.key)![0]!.status !== 200) return
    moved++
    expected[p.from]! -= p.amount
    expected[p.to]! += p.amount
  })
  t.ok(moved > 0, `${moved} of 64 transfers moved bits`)
  const rows = await net.sql<{ id: string; bits: string }>(`select id, bits from identities`)
  const bits = ids.map((x) => Number(rows.find((r) => r.id === x.id)!.bits))
  t.same(bits, expected, 'each balance is its grant minus what it sent plus what it received, once each')
  t.ok(
    bits.every((b) => b >= 0),
    'no negative balance',
  )
  t.equal(
    bits.reduce((a, b) => a + b, 0),
    8 * GRANT,
    'the sum of balances is the sum of grants',
  )
  const [counts] = await net.sql<{ transfers: string; legs: string; total: string }>(
    `select (select count(*) from transfers) as transfers, (select count(*) from ledger where kind = 'transfer') as legs, (select sum(delta) from ledger) as total`,
  )
  t.same(
    counts,
    { transfers: '64', legs: String(2 * moved), total: String(8 * GRANT) },
    'one row per key, two ledger rows per transfer, the ledger sums to the balances',
  )
  for (const [i, x] of ids.entries()) {
    const b = await net.call('GET', '/identity/balance', { token: x.token })
    t.equal(b.body.bits, expected[i], `balance of identity ${i}`)
  }
})

t.test('refusals: unknown recipient, not enough bits, bad amounts and memos, a reused key', async (t) => {
  const net = await startIdentityProcess(t, { IDENTITY_INSTANT_GRANT_BITS: '5' })
  const [a, b] = await register(net, 2)
  const transfer = (body: unknown, key?: string, token = a!.token) =>
    net.call('POST', '/bits/transfer', { token, body, ...(key && { headers: { 'idempotency-key': key } }) })

  const ok = await transfer({ to: b!.id, amount: 2, memo: 'thanks' }, 'k1')
  t.equal(ok.status, 200)
  t.same(ok.body, { ok: true, from: a!.id, to: b!.id, amount: 2, memo: 'thanks', balance: 3 })
  t.same((await transfer({ to: b!.id, amount: 2, memo: 'thanks' }, 'k1')).body, ok.body, 'a retry answers the same')
  t.equal((await net.call('GET', '/identity/balance', { token: a!.token })).body.bits, 3, 'and moves nothing again')

  const nope = await transfer({ to: 'id_00000000000000000000', amount: 1 })
  t.equal(nope.status, 404)
  t.equal(nope.body.error.code, 'not_found')
  const poor = await transfer({ to: b!.id, amount: 4 }, 'k2')
  t.equal(poor.status, 402)
  t.same(poor.body.error, { code: 'insufficient_bits', message: 'not enough bits', details: { required: 4, bits: 3 } })
  await transfer({ to: a!.id, amount: 5 }, 'k-back', b!.token) // a now has 8: enough
  t.equal((await transfer({ to: b!.id, amount: 4 }, 'k2')).status, 402, 'a retried refusal answers the refusal, even once bits arrived')
  t.equal((await transfer({ to: b!.id, amount: 4 }, 'k3')).status, 200, 'a new key is a new transfer')

  t.equal((await transfer({ to: b!.id, amount: 3, memo: 'other' }, 'k1')).status, 400, 'a key reused for a different transfer')
  for (const body of [
    { to: b!.id, amount: 1.5 },
    { to: b!.id, amount: '1' },
    { to: b!.id, amount: 0 },
    { to: b!.id, amount: -1 },
    { to: b!.id, amount: 2 ** 53 },
    { to: b!.id, amount: 1, memo: 'x'.repeat(141) },
    { to: a!.id, amount: 1 },
  ])
    t.equal((await transfer(body)).status, 400, `refused: ${JSON.stringify(body).slice(0, 60)}`)
  t.equal((await transfer({ to: b!.id, amount: 1, memo: 'x'.repeat(140) })).status, 200, 'a 140-character memo is fine')
  t.equal((await transfer({ to: b!.id, amount: 1 }, 'bad key with spaces')).status, 400, 'an Idempotency-Key must be printable ASCII')
  t.equal((await transfer({ to: b!.id, amount: 1 }, undefined, 'wim_nosuch')).status, 401)
  const [sum] = await net.sql<{ balances: string; ledger: string }>(
    `select (select sum(bits) from identities) as balances, (select sum(delta) from ledger) as ledger`,
  )
  t.same(sum, { balances: '10', ledger: '10' })
})
