import t from 'tap'
import { startAggregatorProcess, startBoardProcess, type ProcessRole } from '../aggregator/processes.js'
import { TOKEN } from '../aggregator/support.js'
import { startIdentityProcess } from './support.js'

// A network from this repository alone: the identity network and two boards in network mode
// (IDENTITY_URL pointing at it), each a real process on PostgreSQL. One identity publishes on both
// boards; derived tokens are scoped to one board; standing comes from the network's bits; with
// the network down, publishes fail closed and reads go on.

const FLOOR = 10

async function publish(board: ProcessRole | string, token: string, body: Record<string, unknown>) {
  const res = await fetch(`${typeof board === 'string' ? board : board.url}/sw/signals`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  return { status: res.status, body: (await res.json()) as any, retryAfter: res.headers.get('retry-after') }
}
const thread = (text: string) => ({ $type: 'broadcast', text })

t.test('one identity, two boards, derived tokens, standing, revocation, the network down', async (t) => {
  const net = await startIdentityProcess(t, { IDENTITY_INSTANT_GRANT_BITS: String(FLOOR), REGISTER_RATE_LIMIT_MAX: '0' })
  const boardEnv = { IDENTITY_URL: net.url, THREAD_BIT_FLOOR: String(FLOOR), UNVERIFIED_THREADS_PER_DAY: '10' }
  const [a, b] = await Promise.all([startBoardProcess(t, boardEnv), startBoardProcess(t, boardEnv)])
  const call = net.call

  // registers once, publishes on both boards as the same identity
  const agent = (await call('POST', '/identity/register', { body: { displayName: 'Roamer' } })).body
  const onA = await publish(a, agent.token, thread('hello A'))
  const onB = await publish(b, agent.token, thread('hello B'))
  t.equal(onA.status, 200)
  t.equal(onB.status, 200)
  const origin = {
    origin: agent.identityId,
    originName: 'Roamer',
    originVerified: false,
    originUri: `sw://${net.authority}/identities/${agent.identityId}`,
  }
  t.match(onA.body.signal, origin, 'board A: the network identity')
  t.match(onB.body.signal, origin, 'board B: the same identity')

  // a token derived for board A publishes there and nowhere else
  const derive = async (token: string, authority: string) =>
    (await call('POST', '/identity/tokens/derive', { token, body: { authority, ttl: 600 } })).body.token as string
  const forA = await derive(agent.token, a.authority)
  t.equal(
    (await publish(a, forA, { $type: 'reply', $refId: onA.body.signal.id, text: 'via derived' })).status,
    200,
    'derived for A: accepted by A',
  )
  const refused = await publish(b, forA, thread('wrong board'))
  t.equal(refused.status, 401, 'derived for A: refused by B')
  t.equal(refused.body.error.code, 'unauthorized')

  // standing: a thread needs FLOOR bits; a transfer gives them, seen by the board with a token it has not cached
  const poor = (await call('POST', '/identity/register', { body: {} })).body
  t.equal((await call('POST', '/bits/transfer', { token: poor.token, body: { to: agent.identityId, amount: 5 } })).status, 200)
  const gated = await publish(a, poor.token, thread('too poor'))
  t.equal(gated.status, 402)
  t.same(gated.body.error.details, { required: FLOOR, bits: 5 }, 'insufficient_standing with the network’s bits')
  t.equal(
    (await call('POST', '/bits/transfer', { token: agent.token, body: { to: poor.identityId, amount: 5 } })).status,
    200,
    'the bits come back',
  )
  // the board caches a verdict 30 s; a token it has never seen is verified now
  t.equal(
    (await publish(a, await derive(poor.token, a.authority), thread('rich again'))).status,
    200,
    'with the bits back, the thread opens',
  )

  // revoking the master token stops the tokens derived from it
  const unused = await derive(agent.token, b.authority)
  const rotated = (await call('POST', '/identity/tokens/rotate', { token: agent.token })).body.token as string
  t.equal((await publish(b, unused, thread('after revoke'))).status, 401, 'a token derived before the rotation is refused')
  t.equal(
    (await publish(b, await derive(rotated, b.authority), thread('new master'))).status,
    200,
    'the new master token derives working tokens',
  )

  // the network down: publishes fail closed (503), reads carry on
  const notYetSeen = await derive(rotated, a.authority)
  await net.kill()
  const down = await publish(a, notYetSeen, thread('network down'))
  t.equal(down.status, 503, 'fail closed, never 401')
  t.equal(down.body.error.code, 'unavailable')
  t.equal(down.retryAfter, '5')
  const read = await fetch(`${a.url}/sw/signals`)
  t.equal(read.status, 200, 'reads continue')
  t.ok(((await read.json()) as { signals: unknown[] }).signals.length >= 3)
  await net.start()
  t.equal((await publish(a, notYetSeen, thread('network back'))).status, 200, 'the network back, the same token publishes')
})

t.test('the aggregator swaps a master token for one derived for the board it proxies to', async (t) => {
  const net = await startIdentityProcess(t, { REGISTER_RATE_LIMIT_MAX: '0' })
  const boardEnv = { IDENTITY_URL: net.url, THREAD_BIT_FLOOR: '1', UNVERIFIED_THREADS_PER_DAY: '10' }
  const [a, b, agg] = await Promise.all([
    startBoardProcess(t, boardEnv),
    startBoardProcess(t, boardEnv),
    startAggregatorProcess(t, { IDENTITY_URL: net.url, AGGREGATOR_FETCH_TIMEOUT_MS: '20000' }),
  ])
  for (const board of [a, b]) {
    const r = await fetch(`${agg.url}/registry/boards`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: board.url }),
    })
    t.equal(r.status, 201, `registers ${board.authority}`)
  }
  const derivedCount = async () => {
    const text = await fetch(`${net.url}/metrics`).then((r) => r.text())
    return Number(/wire_identity_events_total\{event="derived"\} (\d+)/.exec(text)?.[1] ?? 0)
  }
  const agent = (await net.call('POST', '/identity/register', { body: { displayName: 'Via Aggregator' } })).body
  const viaA = `${agg.url}/sw/${a.authority}`
  const viaB = `${agg.url}/sw/${b.authority}`

  const first = await publish(viaA, agent.token, thread('through the aggregator'))
  t.equal(first.status, 200)
  t.match(first.body.signal, { origin: agent.identityId, originName: 'Via Aggregator' })
  t.equal(await derivedCount(), 1, 'the aggregator derived a token for board A')
  t.equal((await publish(viaA, agent.token, thread('again'))).status, 200)
  t.equal(await derivedCount(), 1, 'and reuses it')
  t.equal((await publish(viaB, agent.token, thread('on B'))).status, 200)
  t.equal(await derivedCount(), 2, 'board B gets a token of its own')

  const forB = (await net.call('POST', '/identity/tokens/derive', { token: agent.token, body: { authority: b.authority, ttl: 600 } })).body
    .token
  t.equal(
    (await publish(viaA, forB, thread('B token to A'))).status,
    401,
    'a derived token goes on unchanged, and board A refuses one made for B',
  )
  t.equal((await publish(viaB, forB, thread('ok on B'))).status, 200, 'board B takes it')

  const other = (await net.call('POST', '/identity/register', { body: {} })).body
  await net.kill()
  const down = await publish(viaA, other.token, thread('network down'))
  t.equal(down.status, 503, 'no derived token, no publish: the master token is not sent instead')
  const read = await fetch(`${viaA}/sw/signals`, { headers: { authorization: `Bearer ${other.token}` } })
  t.equal(read.status, 200, 'a read goes on without the token')
})
