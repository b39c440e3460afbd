import t from 'tap'
import { linkProxy } from '../../bench/lib/drill/proxy.js'
import { startHostileBoard } from '../../bench/lib/hostile-board.js'
import { sample } from '../deploy/support.js'
import { freePort } from '../helpers/process.js'
import { eventually } from '../helpers/wait.js'
import { publishOn, searchFinds, startTestAggregator, startTestBoard, type TestAggregator } from './support.js'

// A followed board that stalls shows at once on the aggregator, not only when its checks mark it
// down (AGGREGATOR_DOWN_AFTER_SECONDS): `wire_aggregator_boards_stalled` and
// `wire_aggregator_follow_lag_seconds` from AGGREGATOR_FOLLOW_STALLED_SECONDS after its last page
// read, one warning naming it, and one line when it answers again. The follower's long-polls wait
// 1 s here (25 s in production), so a quiet board that answers them is read every second and the
// threshold can be 4 s; every wait is on state, with deadlines far past it.

const STALLED_S = 4
const ENV = { AGGREGATOR_FOLLOW_STALLED_SECONDS: String(STALLED_S), AGGREGATOR_REGISTER_RATE_LIMIT_MAX: '0' }

const scrape = async (agg: TestAggregator) => {
  const text = await (await fetch(`${agg.url}/metrics`)).text()
  const value = (name: string, labels: Record<string, string> = {}) => sample(text, name, labels) ?? Number.NaN
  return {
    stalled: value('wire_aggregator_boards_stalled'),
    lag: value('wire_aggregator_follow_lag_seconds'),
    followed: value('wire_aggregator_boards_followed'),
    reads: (outcome: string) => value('wire_aggregator_follow_reads_total', { outcome }),
  }
}
/** The aggregator's log lines with message `msg` (its start) about `board`. */
const logged = (agg: TestAggregator, msg: string, board: string) =>
  agg.logs
    .map((l) => JSON.parse(l) as { msg: string; board?: string; level: number })
    .filter((l) => l.msg.startsWith(msg) && l.board === board)

t.test(
  'a followed board whose link stalls shows within AGGREGATOR_FOLLOW_STALLED_SECONDS, the other board is not counted, and it recovers when the link passes',
  async (t) => {
    const good = await startTestBoard(t)
    // the other board behind a link that stops forwarding and closes nothing (the network drills' own)
    const port = await freePort()
    const link = await linkProxy('127.0.0.1', { host: '127.0.0.1', port })
    t.teardown(() => link.close())
    const slowAuthority = `127.0.0.1:${link.port}`
    const slow = await startTestBoard(t, { PUBLIC_WIRE_URL: `http://${slowAuthority}`, PUBLIC_WIRE_HOST: slowAuthority }, { port })
    const agg = await startTestAggregator(t, ENV, { followWaitSeconds: 1 })
    t.teardown(() => link.pass()) // before the aggregator stops
    t.equal((await agg.register(good.url)).status, 201)
    t.equal((await agg.register(`http://${slowAuthority}`)).status, 201)
    t.equal((await publishOn(slow.url, 'linked narwhal')).status, 200)
    t.ok(await eventually(() => searchFinds(agg.url, 'narwhal'), 30_000), 'the board behind the link is followed')
    t.ok(
      await eventually(async () => {
        const now = await scrape(agg)
        return now.followed === 2 && now.reads('empty') >= 2
      }, 30_000),
      'both boards are followed, their quiet long-polls answered',
    )
    const before = await scrape(agg)
    t.equal(before.stalled, 0, 'none stalled')
    t.ok(before.reads('page') >= 1, 'reads are counted by outcome (page, empty)')

    link.stall()
    const stalledAt = Date.now()
    t.ok(await eventually(async () => (await scrape(agg)).stalled > 0, 30_000), 'the stalled board shows')
    const shownS = (Date.now() - stalledAt) / 1000
    const shown = await scrape(agg)
    t.equal(shown.stalled, 1, 'one board stalled: the other is not counted')
    t.ok(shown.lag >= STALLED_S, `the follow lag is past the threshold (${shown.lag} s)`)
    t.ok(shownS < STALLED_S + 10, `it showed ${shownS.toFixed(1)} s into the stall (the threshold: ${STALLED_S} s)`)
    t.ok(await eventually(() => logged(agg, 'follow stalled', slowAuthority).length === 1, 10_000), 'a warning names the board')
    t.equal(logged(agg, 'follow stalled', slowAuthority)[0]?.level, 40, 'at warn')

    t.equal((await publishOn(good.url, 'during walrus')).status, 200)
    t.ok(await eventually(() => searchFinds(agg.url, 'walrus'), 30_000), 'the other board is still followed and searched')
    // the stalled board's lag grows to three times the threshold; every scrape meanwhile counts it alone,
    // while the other board, quiet, is read by long-polls for longer than the threshold
    let most = 0
    t.ok(
      await eventually(async () => {
        const now = await scrape(agg)
        most = Math.max(most, now.stalled)
        return now.lag >= 3 * STALLED_S
      }, 60_000),
      'the lag grows while the link is stalled',
    )
    t.equal(most, 1, 'no scrape counted the other board')
    t.equal(logged(agg, 'follow stalled', slowAuthority).length, 1, 'one warning however many checks and scrapes')
    t.same(logged(agg, 'follow stalled', good.authority), [], 'none about the other board')

    link.pass()
    t.ok(
      await eventually(async () => {
        const now = await scrape(agg)
        return now.stalled === 0 && now.lag < STALLED_S
      }, 60_000),
      'once the link passes, no board is stalled and the lag is back under the threshold',
    )
    t.ok(await eventually(() => logged(agg, 'follow recovered', slowAuthority).length === 1, 10_000), 'one line says it recovered')
    t.equal((await publishOn(slow.url, 'after orca')).status, 200)
    t.ok(await eventually(() => searchFinds(agg.url, 'orca'), 30_000), 'and it is followed again')
    t.equal(logged(agg, 'follow stalled', slowAuthority).length, 1, 'still the one warning')
  },
)

t.test(
  'a board that answers its page reads with nothing (headers, then a stall) stalls too, with one warning for many failed reads',
  async (t) => {
    const agg = await startTestAggregator(t, { ...ENV, AGGREGATOR_FETCH_TIMEOUT_MS: '1000' }, { followWaitSeconds: 1 })
    const before = (await scrape(agg)).reads('failed')
    const stall = await startHostileBoard(t, 'stall', { stallBytes: 100 })
    t.equal((await agg.register(stall.url)).status, 201)
    t.ok(await eventually(async () => (await scrape(agg)).stalled === 1, 30_000), 'the board shows as stalled')
    t.ok(await eventually(() => stall.cut >= 3, 60_000), `its reads are cut at their deadline and asked again (${stall.cut})`)
    const now = await scrape(agg)
    t.ok(now.reads('failed') >= before + 3, `the failed reads are counted (${now.reads('failed') - before})`)
    t.equal(logged(agg, 'follow stalled', stall.authority).length, 1, 'one warning, not one per failed read')
  },
)

t.test('a stopped board counts as stalled until its checks mark it down; then the registry shows it instead', async (t) => {
  const agg = await startTestAggregator(
    t,
    { ...ENV, AGGREGATOR_RECHECK_SECONDS: '1', AGGREGATOR_DOWN_AFTER_SECONDS: '10', AGGREGATOR_FETCH_TIMEOUT_MS: '1000' },
    { followWaitSeconds: 1 },
  )
  const board = await startTestBoard(t)
  const empty = (await scrape(agg)).reads('empty')
  t.equal((await agg.register(board.url)).status, 201)
  t.ok(
    await eventually(async () => {
      const now = await scrape(agg)
      return now.followed === 1 && now.reads('empty') > empty
    }, 30_000),
    'followed',
  )
  await board.stop()
  t.ok(await eventually(async () => (await scrape(agg)).stalled === 1, 30_000), 'stalled once it refuses connections')
  const status = async () => ((await (await fetch(`${agg.url}/registry/boards/${board.authority}`)).json()) as any).board.status
  t.ok(await eventually(async () => (await status()) === 'down', 60_000), 'its checks mark it down')
  t.ok(
    await eventually(async () => {
      const now = await scrape(agg)
      return now.stalled === 0 && now.lag === 0
    }, 30_000),
    'a board marked down is neither counted stalled nor in the lag: the registry shows it (and the alert does not fire for it)',
  )
  await board.start()
  t.ok(await eventually(async () => (await status()) === 'up', 60_000), 'it is up again')
  t.ok(await eventually(() => logged(agg, 'follow recovered', board.authority).length === 1, 60_000), 'and its follow recovered')
  t.equal(logged(agg, 'follow stalled', board.authority).length, 1, 'one warning for the whole outage')
})
