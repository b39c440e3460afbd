import t from 'tap'
import { linkProxy } from '../../bench/lib/drill/proxy.js'
import { TEST_DATABASE_URL } from '../helpers/services.js'
import { startTestAggregator, startTestBoard } from './support.js'

// The aggregator's proxy needs its database only to look a board up in the registry: while the
// database does not answer, a board it has looked up before is still proxied, from that lookup
// (the network drills found every proxied request waiting on a new lookup, then 503, from a few
// seconds into a cut: docs/operations.md "The network drills"). The database is behind a link
// that stalls (bench/lib/drill/proxy.ts); the lookup is kept 1 ms, so every read after the stall
// looks its board up again.

t.test('the proxy serves a board it knows while its database does not answer', async (t) => {
  const board = await startTestBoard(t)
  const target = new URL(TEST_DATABASE_URL)
  const link = await linkProxy('127.0.0.1', { host: target.hostname, port: Number(target.port || 5432) })
  t.teardown(() => link.close())
  const url = new URL(TEST_DATABASE_URL)
  url.port = String(link.port)
  const agg = await startTestAggregator(
    t,
    { DATABASE_URL: url.toString(), DATABASE_URL_DIRECT: url.toString(), DB_QUERY_TIMEOUT_MS: '500', DB_CONNECT_TIMEOUT_MS: '500' },
    { follow: false, proxyLookupTtlMs: 1 },
  )
  t.teardown(() => link.pass()) // before the aggregator stops
  t.equal((await agg.register(board.url)).status, 201, 'the board registered')
  const read = () =>
    fetch(`${agg.url}/sw/${board.authority}/sw/signals?limit=1`, { signal: AbortSignal.timeout(20_000) }).then(
      async (r) => (r.status === 200 ? 200 : `${r.status} ${await r.text()}`),
      () => 'hung',
    )
  t.equal(await read(), 200, 'proxied')
  link.stall()
  for (let i = 1; i <= 3; i++) t.equal(await read(), 200, `proxied with the database stalled (${i})`)
  const unknown = await fetch(`${agg.url}/sw/127.0.0.1:1/sw/signals`, { signal: AbortSignal.timeout(20_000) }).then(
    (r) => r.status,
    () => 'hung',
  )
  t.equal(unknown, 503, 'a board never looked up is 503 meanwhile, not a hang')
  link.pass()
  t.equal(await read(), 200, 'proxied once the database answers again')
})
