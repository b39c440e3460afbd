import t from 'tap'
import { startHostileBoard } from '../../bench/lib/hostile-board.js'
import { manualClock } from '../helpers/clock.js'
import { until } from '../helpers/wait.js'
import { ADMIN, auth, publishOn, startTestAggregator, startTestBoard } from './support.js'

// Each board's bytes a second through the proxy (AGGREGATOR_PROXY_BOARD_BYTES_PER_SECOND), against
// a board that pumps a large answer, over real sockets. The aggregator's budget runs on a clock the
// test drives: while it stands still a board over its budget gets no byte more, however long the
// machine takes; each second it moves lets the rate's bytes through. Nothing here is timed.

const RATE = 262_144 // 256 KiB a second: a new bucket holds 1 s of it (a full one 4 s)
const START = RATE
const CHUNK = 256 * 1024 // the most one read from the board's socket may pass the budget by (one chunk)
const WAIT = 60_000 // generous: state is waited on, never a guessed time

/** A proxied answer read as it arrives: the bytes so far, and how it ended. */
function reading(url: string, signal: AbortSignal) {
  const r = { status: 0, received: 0, end: null as 'ended' | 'cut' | null }
  void fetch(url, { signal })
    .then(async (res) => {
      r.status = res.status
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) r.received += chunk.length
      r.end = 'ended'
    })
    .catch(() => void (r.end = 'cut'))
  return r
}

/** One sample of the aggregator's /metrics (0 when absent). */
const metric = async (agg: string, line: string) =>
  Number(new RegExp(`^${line.replace(/[{}"]/g, '\\$&')} (\\S+)$`, 'm').exec(await (await fetch(`${agg}/metrics`)).text())?.[1] ?? 0)

t.test("a board pumping an answer is held to its bytes a second; another board's answer is served in full meanwhile", async (t) => {
  const clock = manualClock()
  const pump = await startHostileBoard(t, 'huge', { hugeBytes: 6 * 1024 * 1024 })
  const good = await startTestBoard(t)
  const agg = await startTestAggregator(t, { AGGREGATOR_PROXY_BOARD_BYTES_PER_SECOND: String(RATE) }, { follow: false, clock })
  for (const b of [pump, good]) t.equal((await agg.register(b.url)).status, 201)
  for (let i = 0; i < 5; i++) t.equal((await publishOn(good.url, `honest ${i} ${'x'.repeat(10_000)}`)).status, 200)
  const budget = agg.started().ctx.proxy.budget
  // bytes taken from a board's new bucket, `seconds` of the clock after it was made (while it never filled)
  const charged = (board: string, seconds: number) => START + seconds * RATE - budget.level(board)

  const ctl = new AbortController()
  t.teardown(() => ctl.abort())
  const pumped = reading(`${agg.url}/sw/${pump.authority}/sw/signals`, ctl.signal)
  // (without a budget the client would have had far more by now: that ends the wait too, and fails below)
  await until(
    () => pumped.received > START + CHUNK || (budget.counts.waited === 1 && pumped.received === charged(pump.authority, 0)),
    WAIT,
    'the pumped answer waits',
  )
  t.equal(pumped.status, 200)
  t.ok(
    pumped.received >= START && pumped.received <= START + CHUNK,
    `the client has what a new bucket holds (${pumped.received} bytes) and no more`,
  )
  t.ok(budget.level(pump.authority) < 0, "the pump's bucket is below zero")

  const refused = await fetch(`${agg.url}/sw/${pump.authority}/sw/stats`)
  t.equal(refused.status, 503, 'a new request to the board over its budget is refused before any work')
  t.equal(refused.headers.get('retry-after'), '1', 'Retry-After: when the rate has paid the excess back (under a chunk: 1 s)')
  t.match(((await refused.json()) as any).error.message, /is over this aggregator's budget of 262144 bytes a second/)

  const before = pumped.received
  const page = await fetch(`${agg.url}/sw/${good.authority}/sw/signals`, { headers: auth() })
  const bytes = Buffer.byteLength(await page.clone().text())
  t.equal(page.status, 200)
  t.equal(((await page.json()) as any).signals.length, 5, 'the other board is read in full while the clock stands still')
  t.equal(budget.level(good.authority), START - bytes, `its ${bytes} bytes were charged to its own bucket`)
  t.equal(budget.counts.waited, 1, 'and its answer never waited')
  t.equal(pumped.received, before, 'the pump got no byte more meanwhile')

  for (const seconds of [1, 3]) {
    clock.advance(seconds === 1 ? 1000 : 2000)
    await until(
      () => pumped.received === charged(pump.authority, seconds) && budget.waitMs(pump.authority) > 0,
      WAIT,
      `the pump after ${seconds} s`,
    )
    const allowed = START + seconds * RATE
    t.ok(
      pumped.received > allowed - CHUNK && pumped.received <= allowed + CHUNK,
      `after ${seconds} s of the clock: ${pumped.received} bytes, the first second's and ${seconds} s of the rate (${allowed})`,
    )
  }
  t.equal(pumped.end, null, 'still streaming, at the rate')
  t.equal(await metric(agg.url, 'wire_aggregator_proxy_throttled_seconds_total'), 3, 'the seconds it waited')
  t.equal(await metric(agg.url, 'wire_aggregator_proxy_throttled_total{outcome="waited"}'), 1, 'one answer waited')
  t.equal(await metric(agg.url, 'wire_aggregator_proxy_throttled_total{outcome="refused"}'), 1, 'one request refused')
  t.equal(await metric(agg.url, 'wire_aggregator_proxy_boards_over_budget'), 1, 'one board over its budget now')
  t.equal(await metric(agg.url, 'wire_aggregator_proxy_board_bytes_total'), budget.counts.bytes, 'the bytes charged')

  ctl.abort()
  await until(() => agg.started().ctx.proxy.inFlight === 0 && pump.open === 0, WAIT, 'the client gone, the board released')
  t.equal(budget.size, 2, 'a bucket for each board reached')
  const removed = await fetch(`${agg.url}/registry/boards/${pump.authority}`, { method: 'DELETE', headers: auth(ADMIN) })
  t.equal(removed.status, 204)
  t.equal(budget.size, 1, "a removed board's bucket goes with it")
})

t.test("a shared long-poll's answer, read whole, is charged once and read at the board's rate", async (t) => {
  const clock = manualClock()
  const pump = await startHostileBoard(t, 'huge', { hugeBytes: 1.5 * 1024 * 1024 })
  const agg = await startTestAggregator(t, { AGGREGATOR_PROXY_BOARD_BYTES_PER_SECOND: String(RATE) }, { follow: false, clock })
  t.equal((await agg.register(pump.url)).status, 201)
  const budget = agg.started().ctx.proxy.budget
  const url = `${agg.url}/sw/${pump.authority}/sw/signals?cursor=0&wait=5` // anonymous: shared
  const answers = [reading(url, AbortSignal.timeout(WAIT)), reading(url, AbortSignal.timeout(WAIT))]
  await until(
    () => answers.some((a) => a.end) || (budget.counts.waited === 1 && budget.level(pump.authority) < 0),
    WAIT,
    'the shared read waits',
  )
  t.same(
    answers.map((a) => a.status),
    [0, 0],
    'no client has an answer yet: it is read whole first',
  )
  t.ok(budget.counts.bytes <= START + CHUNK, `${budget.counts.bytes} bytes read of it: what a new bucket holds`)
  while (!answers.every((a) => a.end)) {
    const before = budget.counts.bytes
    clock.advance(4000)
    await until(
      () => answers.every((a) => a.end) || (budget.counts.bytes > before && budget.waitMs(pump.authority) > 0),
      WAIT,
      'the next 4 s of the rate',
    )
  }
  const size = 1.5 * 1024 * 1024 + '{"signals":['.length
  t.same(
    answers.map((a) => [a.status, a.received]),
    [
      [200, size],
      [200, size],
    ],
    'both clients get the whole answer',
  )
  t.equal(budget.counts.bytes, size, 'read from the board once, charged once')
  t.equal(pump.pages, 1, 'one request to the board')
})

t.test("a throttled answer still ends at the exchange's deadline, and its slots are given back", async (t) => {
  const clock = manualClock()
  const pump = await startHostileBoard(t, 'huge', { hugeBytes: 4 * 1024 * 1024 })
  const agg = await startTestAggregator(
    t,
    { AGGREGATOR_PROXY_BOARD_BYTES_PER_SECOND: '65536', AGGREGATOR_PROXY_TIMEOUT_MS: '2000' },
    { follow: false, clock },
  )
  t.equal((await agg.register(pump.url)).status, 201)
  const pumped = reading(`${agg.url}/sw/${pump.authority}/sw/signals`, AbortSignal.timeout(WAIT))
  await until(() => pumped.end !== null, WAIT, 'the answer ends')
  t.equal(pumped.end, 'cut', 'cut at the deadline, the clock never having moved')
  t.ok(pumped.received < 4 * 1024 * 1024, `${pumped.received} bytes of it`)
  t.equal(agg.started().ctx.proxy.budget.counts.waited, 1, 'it had waited for its budget')
  await until(() => agg.started().ctx.proxy.inFlight === 0 && pump.open === 0, WAIT, 'slots and the board given back')
  t.equal(agg.started().ctx.proxy.boardInFlight(pump.authority), 0)
})
