import t from 'tap'
import { startAggregatorProcess, startBoardProcess } from './processes.js'
import { auth, startTestBoard, TOKEN } from './support.js'
import { until } from '../helpers/wait.js'

// The cursor promise across boards: while three boards publish, one board (a real process) is
// killed with SIGKILL mid-publishing and started again on the same port and schema, then the
// aggregator (a real process) is killed the same way and started again; a search follower that
// keeps its nextCursor still receives every acknowledged signal, exactly once.

t.test('a board killed and restarted, the aggregator killed and restarted: search misses nothing acknowledged', async (t) => {
  const unlimited = { PUBLISH_RATE_LIMIT_MAX: '0', PUBLISH_ADDRESS_RATE_LIMIT_MAX: '0' } // one token publishes hundreds a minute here
  const [b0, b2, b1, agg] = await Promise.all([
    startTestBoard(t, unlimited),
    startTestBoard(t, unlimited),
    startBoardProcess(t, unlimited),
    startAggregatorProcess(t),
  ])
  const boards = [b0, b1, b2]
  for (const b of boards) {
    const r = await fetch(`${agg.url}/registry/boards`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth(TOKEN) },
      body: JSON.stringify({ url: b.url }),
    })
    t.equal(r.status, 201, `registered ${b.authority}`)
  }

  const acked = new Set<string>()
  const ackedBy = [0, 0, 0]
  let publishing = true
  const publisher = async (url: string, i: number) => {
    for (let n = 0; publishing; n++) {
      try {
        const r = await fetch(`${url}/sw/signals`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...auth() },
          body: JSON.stringify({ $type: 'broadcast', text: `b${i} n${n}` }),
        })
        if (r.status === 200) acked.add(((await r.json()) as any).signal.id), ackedBy[i]!++
      } catch {
        // the board is down, or died with this request in flight: not acknowledged
      }
      await new Promise((r) => setTimeout(r, 20))
    }
  }

  const received: string[] = []
  const seen = new Set<string>()
  let following = true
  let cursor: number | null = null
  const follower = (async () => {
    while (following) {
      try {
        const q: string = cursor === null ? '' : `cursor=${cursor}&wait=2&limit=100`
        const r = await fetch(`${agg.url}/search/signals?${q}`)
        if (r.status !== 200) throw new Error(String(r.status))
        const page = (await r.json()) as any
        if (cursor !== null) for (const s of page.signals) received.push(s.id), seen.add(s.id)
        cursor = page.nextCursor
      } catch {
        await new Promise((r) => setTimeout(r, 50)) // the aggregator is down: ask again, from the same cursor
      }
    }
  })()
  await until(() => cursor !== null, 5000, "the follower's first cursor")

  const pubs = boards.map((b, i) => publisher(b.url, i))
  t.teardown(() => ((publishing = false), (following = false), Promise.all([...pubs, follower])))
  await until(() => ackedBy[1]! >= 20 && acked.size >= 40, 15_000, 'publishes before the kills')
  await b1.kill() // its publisher has a request in flight or about to be: cut mid-publishing
  const whileDown = acked.size
  await until(() => acked.size >= whileDown + 20, 10_000, 'publishes on the others while a board is down')
  await b1.start()
  const b1Back = ackedBy[1]!
  await until(() => ackedBy[1]! >= b1Back + 10, 10_000, 'publishes on the restarted board')
  await agg.kill()
  const aggDown = acked.size
  await until(() => acked.size >= aggDown + 40, 10_000, 'publishes while the aggregator is down')
  await agg.start()
  const aggBack = acked.size
  await until(() => acked.size >= aggBack + 30, 10_000, 'publishes after the restarts')
  publishing = false
  await Promise.all(pubs)

  await until(() => [...acked].every((id) => seen.has(id)), 30_000, 'every acknowledged signal found by search').catch(() => {})
  following = false
  await follower
  const missing = [...acked].filter((id) => !seen.has(id))
  t.same(missing, [], `all ${acked.size} acknowledged signals found (per board ${ackedBy.join(', ')})`)
  t.equal(new Set(received).size, received.length, 'none twice')
})
