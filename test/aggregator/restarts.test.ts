import t from 'tap'
import { auth, startTestAggregator, startTestBoard, type TestBoard } from './support.js'
import { until } from '../helpers/wait.js'

// The cursor promise across boards: while three boards publish, one board stops and starts again and
// the aggregator stops and starts again; a search follower that keeps its nextCursor still receives
// every acknowledged signal exactly once.

t.test('a board restarted and the aggregator restarted mid-run: search misses nothing acknowledged', async (t) => {
  const boards = await Promise.all([startTestBoard(t), startTestBoard(t), startTestBoard(t)])
  const agg = await startTestAggregator(t)
  for (const b of boards) t.equal((await agg.register(b.url)).status, 201)

  const acked = new Set<string>()
  let publishing = true
  const publisher = async (b: TestBoard, i: number) => {
    for (let n = 0; publishing; n++) {
      try {
        const r = await fetch(`${b.url}/sw/signals`, { method: 'POST', headers: { 'content-type': 'application/json', ...auth() }, body: JSON.stringify({ $type: 'broadcast', text: `b${i} n${n}` }) })
        if (r.status === 200) acked.add(((await r.json()) as any).signal.id)
      } catch {
        // the board is down: this one was not acknowledged
      }
      await new Promise((r) => setTimeout(r, 15))
    }
  }

  const received: string[] = []
  let following = true
  let cursor: number | null = null
  const follower = (async () => {
    while (following) {
      try {
        const q: string = cursor === null ? '' : `cursor=${cursor}&wait=2&limit=100`
        const r = await fetch(`${agg.url}/search/signals?${q}`)
        if (r.status !== 200) throw new Error(String(r.status))
        const page = (await r.json()) as any
        if (cursor !== null) received.push(...page.signals.map((s: any) => s.id))
        cursor = page.nextCursor
      } catch {
        await new Promise((r) => setTimeout(r, 50)) // the aggregator is restarting
      }
    }
  })()
  await until(() => cursor !== null, 5000, 'the follower\'s first cursor')

  const pubs = boards.map(publisher)
  await until(() => acked.size >= 30, 10_000, 'publishes before the restarts')
  await boards[1]!.stop()
  await until(() => acked.size >= 60, 10_000, 'publishes while a board is down')
  await boards[1]!.start()
  await agg.stop()
  await until(() => acked.size >= 100, 10_000, 'publishes while the aggregator is down')
  await agg.start()
  await until(() => acked.size >= 150, 15_000, 'publishes after the restarts')
  publishing = false
  await Promise.all(pubs)

  await until(() => acked.size > 0 && [...acked].every((id) => received.includes(id)), 30_000, 'every acknowledged signal found by search').catch(() => {})
  following = false
  await follower
  const missing = [...acked].filter((id) => !received.includes(id))
  t.same(missing, [], `all ${acked.size} acknowledged signals found`)
  t.equal(new Set(received).size, received.length, 'none twice')
})
