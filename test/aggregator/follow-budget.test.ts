import t from 'tap'
import { startHostileBoard, type HostileBoard } from '../../bench/lib/hostile-board.js'
import { eventually } from '../helpers/wait.js'
import { ADMIN, auth, startTestAggregator, startTestBoard, publishOn, searchFinds } from './support.js'

// Many boards together cannot exhaust the aggregator: the pages it follows hold at most
// AGGREGATOR_FOLLOW_MAX_BYTES at once, every board together, and a page's body has a deadline.
// The boards here answer a page's first 40 KB and then stall: each is under the page cap
// (AGGREGATOR_PAGE_MAX_BYTES, 64 KiB), but four of them together are past the budget (100 KB).

t.test(
  'stalled pages of many boards hold at most the process budget; past it a page is dropped and asked again, and other boards are still followed',
  async (t) => {
    const good = await startTestBoard(t)
    // the body deadline far away: only the budget can cut a stalled page within this test
    const agg = await startTestAggregator(t, {
      AGGREGATOR_REGISTER_RATE_LIMIT_MAX: '0',
      AGGREGATOR_PAGE_MAX_BYTES: '65536',
      AGGREGATOR_FOLLOW_MAX_BYTES: '100000',
      AGGREGATOR_FETCH_TIMEOUT_MS: '60000',
    })
    const stalls: HostileBoard[] = []
    for (let i = 0; i < 4; i++) stalls.push(await startHostileBoard(t, 'stall', { stallBytes: 40_000 }))
    for (const b of [good, ...stalls]) t.equal((await agg.register(b.url)).status, 201)
    const followers = agg.started().ctx.followers
    let most = 0
    const watch = setInterval(() => (most = Math.max(most, followers.bytesHeld)), 5)
    t.teardown(() => clearInterval(watch))

    t.ok(await eventually(() => stalls.every((s) => s.pages > 0), 15_000), 'every stalling board was asked for a page')
    t.ok(
      await eventually(() => stalls.reduce((n, s) => n + s.cut, 0) >= 2, 15_000),
      'stalled pages past the budget are dropped (the aggregator closes them)',
    )
    t.ok(await eventually(() => stalls.some((s) => s.pages >= 2), 15_000), 'and asked for again after a backoff')
    const metrics = await (await fetch(`${agg.url}/metrics`)).text()
    t.match(metrics, /wire_aggregator_follow_pages_dropped_total [1-9]/, 'the drops are counted')
    t.ok(
      await eventually(() => followers.bytesHeld >= 80_000, 15_000),
      `two stalled pages are held meanwhile (${followers.bytesHeld} bytes)`,
    )
    t.ok(most <= 100_000, `the pages held never passed the budget: at most ${most} bytes of 100,000 (four boards would hold 160,000)`)

    t.equal((await publishOn(good.url, 'budgeted narwhal')).status, 200)
    t.ok(
      await eventually(() => searchFinds(agg.url, 'narwhal'), 15_000),
      'a board whose small page fits beside them is still followed and searched',
    )
    t.ok(followers.bytesHeld <= 100_000, 'and its page was released once indexed')
  },
)

t.test('a page whose body stalls past AGGREGATOR_FETCH_TIMEOUT_MS after its headers is dropped and its bytes released', async (t) => {
  const agg = await startTestAggregator(t, { AGGREGATOR_REGISTER_RATE_LIMIT_MAX: '0', AGGREGATOR_FETCH_TIMEOUT_MS: '1000' })
  const stall = await startHostileBoard(t, 'stall', { stallBytes: 40_000 })
  t.equal((await agg.register(stall.url)).status, 201)
  // without the deadline the client's own (wait + 15 s) would hold it 40 s
  t.ok(
    await eventually(() => stall.cut >= 2 && stall.pages >= 3, 15_000),
    `the stalled page is cut at its deadline and asked again (${stall.cut} cut of ${stall.pages})`,
  )
  const followers = agg.started().ctx.followers
  t.ok(await eventually(() => followers.bytesHeld > 0, 15_000), 'a stalled page holds its bytes while it waits')
  t.equal((await fetch(`${agg.url}/registry/boards/${stall.authority}`, { method: 'DELETE', headers: auth(ADMIN) })).status, 204)
  t.ok(await eventually(() => followers.bytesHeld === 0, 15_000), 'and none once its board is no longer followed')
})
