import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import t from 'tap'
import { eventually } from '../helpers/wait.js'
import { startHostileBoard } from '../../bench/lib/hostile-board.js'
import { startTestAggregator, startTestBoard } from './support.js'

// Fair accounting through the proxy: one client (one address) cannot spend the board's budget of
// the aggregator's address, the process's proxy slots, or a board's, for everyone else. The clients'
// addresses are told with X-Forwarded-For, which the aggregator trusts from 127.0.0.1 here.

const from = (address: string, headers: Record<string, string> = {}) => ({ 'x-forwarded-for': address, ...headers })

t.test('shared anonymous long-polls count against the client that opened them at the board, not against the aggregator', async (t) => {
  const board = await startTestBoard(t, { TRUST_PROXY: '127.0.0.1', LONG_POLLS_PER_ADDRESS_MAX: '3' })
  const agg = await startTestAggregator(t, { TRUST_PROXY: '127.0.0.1' }, { follow: false })
  t.equal((await agg.register(board.url)).status, 201)
  const via = `${agg.url}/sw/${board.authority}/sw/signals`
  const { nextCursor } = (await (await fetch(via)).json()) as any
  const ctl = new AbortController()
  t.teardown(() => ctl.abort())
  // three distinct polls from one client: three shared upstream requests, each at the board's limit for one address
  const held = ['a', 'b', 'c'].map((tag) =>
    fetch(`${via}?cursor=${nextCursor}&wait=20&tag=${tag}`, { headers: from('203.0.113.7'), signal: ctl.signal }).catch(() => null),
  )
  const waiting = async () => Number(/^wire_waiting_pollers (\d+)$/m.exec(await (await fetch(`${board.url}/metrics`)).text())?.[1])
  t.ok(await eventually(async () => (await waiting()) === 3, 10_000), 'three polls wait at the board')
  const other = await fetch(`${via}?cursor=${nextCursor}&wait=1&tag=d`, { headers: from('203.0.113.8') })
  t.equal(other.status, 200, "another client's poll is answered: the board counted the three against their client, not the aggregator")
  const mine = await fetch(`${via}?cursor=${nextCursor}&wait=1&tag=e`, { headers: from('203.0.113.7') })
  t.equal(mine.status, 429, "and the client that holds three gets the board's own 429")
  ctl.abort()
  await Promise.all(held)
})

t.test("a board that trickles its answers holds at most its client's slots and its own cap, each until the deadline", async (t) => {
  const good = await startTestBoard(t)
  const slow = await startHostileBoard(t, 'trickle', { trickleMs: 300 })
  const agg = await startTestAggregator(
    t,
    {
      TRUST_PROXY: '127.0.0.1',
      READER_MAX_WAITERS: '5',
      AGGREGATOR_PROXY_PER_ADDRESS_MAX: '2',
      AGGREGATOR_PROXY_PER_BOARD_MAX: '3',
      AGGREGATOR_PROXY_TIMEOUT_MS: '2000',
    },
    { follow: false },
  )
  for (const b of [good, slow]) t.equal((await agg.register(b.url)).status, 201)
  const ends: Array<Promise<string>> = []
  const hold = (address: string) => {
    const r = fetch(`${agg.url}/sw/${slow.authority}/sw/stats`, { headers: from(address) })
    ends.push(
      r
        .then((res) => res.text())
        .then(
          () => 'ended',
          () => 'cut',
        ),
    )
    return r
  }
  const [a1, a2] = [hold('198.51.100.1'), hold('198.51.100.1')]
  t.same([(await a1).status, (await a2).status], [200, 200], 'two answers from the trickling board start streaming')
  const a3 = await fetch(`${agg.url}/sw/${slow.authority}/sw/stats`, { headers: from('198.51.100.1') })
  t.equal(a3.status, 429, 'a third from the same address is refused at once: its proxy slots are taken')
  t.match(((await a3.json()) as any).error.message, /2 proxied requests in flight from one address/)
  t.equal((await hold('198.51.100.2')).status, 200, 'another address still reaches the trickling board (its third request)')
  const busy = await fetch(`${agg.url}/sw/${slow.authority}/sw/stats`, { headers: from('198.51.100.3') })
  t.equal(busy.status, 503, "a fourth request to that board is refused: the board's own cap")
  t.match(((await busy.json()) as any).error.message, /limit of requests to 127\.0\.0\.1/)
  for (const address of ['198.51.100.3', '198.51.100.4']) {
    const ok = await fetch(`${agg.url}/sw/${good.authority}/sw/signals`, { headers: from(address) })
    t.equal(ok.status, 200, `${address} reads the good board meanwhile`)
  }
  t.same(await Promise.all(ends), ['cut', 'cut', 'cut'], 'every trickling answer is cut at the total deadline (it never ends by itself)')
  t.ok(await eventually(() => slow.open === 0 && agg.started().ctx.proxy.inFlight === 0), 'and its slots are given back')
  t.equal(
    await fetch(`${agg.url}/sw/${slow.authority}/sw/stats`, { headers: from('198.51.100.1'), signal: AbortSignal.timeout(10_000) }).then(
      (r) => r.status,
    ),
    200,
    'the first address may ask again',
  )
})

t.test("MCP search_signals waits take the address's long-poll slots, as GET /search/signals?wait= does", async (t) => {
  const agg = await startTestAggregator(t, { LONG_POLLS_PER_ADDRESS_MAX: '1' }, { follow: false })
  const { nextCursor } = (await (await fetch(`${agg.url}/search/signals`)).json()) as any
  const ctl = new AbortController()
  t.teardown(() => ctl.abort())
  const held = fetch(`${agg.url}/search/signals?cursor=${nextCursor}&wait=20`, { signal: ctl.signal }).catch(() => null)
  t.ok(await eventually(() => agg.started().ctx.search.waiting === 1), 'an HTTP search waits, holding the one slot')
  const client = new Client({ name: 'slots', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', agg.url)))
  t.teardown(() => client.close())
  const r = await client.callTool({ name: 'search_signals', arguments: { cursor: nextCursor, wait: 1 } })
  t.equal(r.isError, true, 'a waiting MCP search from the same address is refused')
  t.equal(JSON.parse((r.content as Array<{ text: string }>)[0]!.text).error.code, 'rate_limited')
  const now = await client.callTool({ name: 'search_signals', arguments: { cursor: nextCursor } })
  t.notOk(now.isError, 'one that does not wait needs no slot')
  ctl.abort()
  await held
})
