import t from 'tap'
import { WireClient, type WireError } from '../../client/src/index.js'
import { eventually } from '../helpers/wait.js'
import { ADMIN, auth, startTestAggregator, startTestBoard, TOKEN } from './support.js'

// The proxy at {aggregator}/sw/{authority}/…: the same answers as the board, over real sockets.

/** An answer without the clock fields two requests a millisecond apart differ in. */
const strip = (body: any) => {
  const { serverNow: _, generatedAt: __, ...rest } = body
  return rest
}

t.test("reads, by-id, thread, stats, tags and admin answer as the board does; publishes carry the caller's token", async (t) => {
  const board = await startTestBoard(t)
  const agg = await startTestAggregator(t, {}, { follow: false })
  t.equal((await agg.register(board.url)).status, 201)
  const via = `${agg.url}/sw/${board.authority}/sw`
  const direct = `${board.url}/sw`

  const pub = await fetch(`${via}/signals`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...auth() },
    body: JSON.stringify({ $type: 'request', $tags: ['gpu'], text: 'who has a GPU?' }),
  })
  t.equal(pub.status, 200, 'published through the proxy')
  const { signal } = (await pub.json()) as any
  t.equal(signal.uri, `sw://${board.authority}/signals/${signal.id}`, "the board's sw:// URI, unchanged")
  const mine = (await (
    await fetch(`${direct}/signals`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth() },
      body: JSON.stringify({ $type: 'reply', $refId: signal.id, text: 'me' }),
    })
  ).json()) as any
  t.equal(mine.signal.origin, signal.origin, 'the same token is the same identity through the proxy: Authorization passed through')

  for (const path of [
    '/signals',
    '/signals?tag=gpu',
    `/signals/${signal.id}`,
    `/signals/${signal.id}/thread`,
    '/stats',
    '/wire',
    '/tags?prefix=g',
    '/openapi.json',
    '/signals?limit=abc',
    '/signals/nope',
    '/nothing-here',
  ]) {
    const [a, b] = await Promise.all([fetch(via + path), fetch(direct + path)])
    t.equal(a.status, b.status, `${path}: same status (${b.status})`)
    t.equal(a.headers.get('content-type'), b.headers.get('content-type'), `${path}: same content type`)
    const [ta, tb] = [await a.text(), await b.text()]
    if (b.headers.get('content-type')?.includes('json')) t.same(strip(JSON.parse(ta)), strip(JSON.parse(tb)), `${path}: same body`)
    else t.equal(ta, tb, `${path}: same bytes`)
  }
  const admin = await fetch(`${via}/admin/rules`, { headers: auth(ADMIN) })
  t.equal(admin.status, 200, "admin with the board's admin token")
  const doc = (await (await fetch(`${agg.url}/sw/${board.authority}/.well-known/wire`)).json()) as any
  t.equal(doc.protocol, 'wire', "the board's discovery document, through the proxy")
  const notAdmin = await fetch(`${via}/admin/rules`, { headers: auth(TOKEN) })
  t.equal(notAdmin.status, 401, 'and refused without it, as the board refuses')
  t.ok(notAdmin.headers.get('www-authenticate'), "with the board's challenge")
  const limited = await fetch(`${via}/signals?limit=abc`)
  t.equal(((await limited.json()) as any).error.code, 'invalid_request', "the board's error shape")

  t.notOk(agg.logs.join('').includes(TOKEN), "the caller's token is never logged")
  t.notOk(agg.logs.join('').includes(ADMIN), 'nor the admin token')
})

t.test('an unknown board is 404; a board that does not answer is 503 with Retry-After', async (t) => {
  const board = await startTestBoard(t)
  const agg = await startTestAggregator(t, {}, { follow: false })
  const unknown = await fetch(`${agg.url}/sw/nowhere.example/sw/signals`)
  t.equal(unknown.status, 404)
  t.equal(((await unknown.json()) as any).error.code, 'not_found')
  t.equal((await agg.register(board.url)).status, 201)
  await board.stop()
  const down = await fetch(`${agg.url}/sw/${board.authority}/sw/signals`)
  t.equal(down.status, 503)
  t.equal(down.headers.get('retry-after'), '2', 'Retry-After: soon, for a request that failed (a board marked down says longer)')
  t.equal(((await down.json()) as any).error.code, 'unavailable')
  const warned = agg.logs.map((l) => JSON.parse(l)).find((l) => l.msg === 'request refused under load')
  t.match(warned, { reason: `${board.authority} did not answer`, cause: /ECONNREFUSED/ }, 'the warning says which hop failed and how')
})

t.test('a proxied long-poll wakes on a publish made directly on the board', async (t) => {
  const board = await startTestBoard(t)
  const agg = await startTestAggregator(t, {}, { follow: false })
  t.equal((await agg.register(board.url)).status, 201)
  const via = `${agg.url}/sw/${board.authority}/sw`
  const { nextCursor } = (await (await fetch(`${via}/signals`)).json()) as any
  const t0 = Date.now()
  const poll = fetch(`${via}/signals?cursor=${nextCursor}&wait=20`).then((r) => r.json() as Promise<any>)
  t.ok(
    await eventually(async () => /^wire_aggregator_proxied_in_flight 1$/m.test(await (await fetch(`${agg.url}/metrics`)).text())),
    'the poll waits at the board, counted in flight',
  )
  const pub = await fetch(`${board.url}/sw/signals`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...auth() },
    body: JSON.stringify({ $type: 'broadcast', text: 'wake' }),
  })
  t.equal(pub.status, 200)
  const page = await poll
  t.match(page.signals, [{ type: 'broadcast', payload: { text: 'wake' } }])
  t.ok(Date.now() - t0 < 10_000, 'woken, not timed out')
})

t.test('the client library works through the proxy: publish, get, thread, read, board, admin, follow', async (t) => {
  const board = await startTestBoard(t)
  const agg = await startTestAggregator(t, {}, { follow: false })
  t.equal((await agg.register(board.url)).status, 201)
  const wire = new WireClient({ url: `${agg.url}/sw/${board.authority}`, token: TOKEN, adminToken: ADMIN })
  const root = await wire.publish({ $type: 'request', text: 'q' })
  const reply = await wire.publish({ $type: 'reply', $refId: root.signal.uri, text: 'a' })
  t.same(
    (await wire.get(root.signal.id)).replies.map((s) => s.id),
    [reply.signal.id],
  )
  t.same(
    (await wire.thread(root.signal.id)).signals.map((s) => s.id),
    [root.signal.id, reply.signal.id],
  )
  t.equal((await wire.board()).authority, board.authority)
  await wire.admin.remove(reply.signal.id)
  t.equal(await wire.get(reply.signal.id).catch((e: WireError) => e.code), 'not_found')
  const ctl = new AbortController()
  const got: string[] = []
  const follower = wire.follow({}, { cursor: 0, signal: ctl.signal, wait: 5 })
  const done = (async () => {
    for await (const s of follower) {
      got.push(s.id)
      if (got.length === 2) ctl.abort()
    }
  })()
  await wire.publish({ $type: 'broadcast', text: 'live' })
  await done
  t.equal(got[0], root.signal.id, 'follow from the start, through the proxy')
  t.equal(got.length, 2, 'and live')
})

t.test("proxied writes spend the caller address's publish budget at the aggregator, before the board sees them", async (t) => {
  const board = await startTestBoard(t)
  const agg = await startTestAggregator(t, { PUBLISH_ADDRESS_RATE_LIMIT_MAX: '2' }, { follow: false })
  t.equal((await agg.register(board.url)).status, 201)
  const post = () =>
    fetch(`${agg.url}/sw/${board.authority}/sw/signals`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth() },
      body: JSON.stringify({ $type: 'broadcast' }),
    })
  t.equal((await post()).status, 200)
  t.equal((await post()).status, 200)
  const third = await post()
  t.equal(third.status, 429, 'refused here')
  t.equal(((await third.json()) as any).error.code, 'rate_limited')
  const feed = (await (await fetch(`${board.url}/sw/signals`)).json()) as any
  t.equal(feed.signals.length, 2, 'the board saw two')
})

t.test('identical anonymous long-polls share one request to the board; one with a token goes on its own', async (t) => {
  const board = await startTestBoard(t)
  const agg = await startTestAggregator(t, {}, { follow: false })
  t.equal((await agg.register(board.url)).status, 201)
  const via = `${agg.url}/sw/${board.authority}/sw`
  const { nextCursor } = (await (await fetch(`${via}/signals`)).json()) as any
  const poll = (headers: Record<string, string> = {}) =>
    fetch(`${via}/signals?cursor=${nextCursor}&wait=20`, { headers }).then(async (r) => ({
      status: r.status,
      body: (await r.json()) as any,
    }))
  const polls = [poll(), poll(), poll(), poll(auth())]
  const waitingAtBoard = async () => Number(/^wire_waiting_pollers (\d+)$/m.exec(await (await fetch(`${board.url}/metrics`)).text())?.[1])
  t.ok(
    await eventually(async () => /^wire_aggregator_proxied_in_flight 4$/m.test(await (await fetch(`${agg.url}/metrics`)).text())),
    'four clients wait at the aggregator',
  )
  t.ok(
    await eventually(async () => (await waitingAtBoard()) === 2),
    'two requests wait at the board: the shared one and the one with a token',
  )
  const sent = (await (
    await fetch(`${board.url}/sw/signals`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth() },
      body: JSON.stringify({ $type: 'broadcast', text: 'all of you' }),
    })
  ).json()) as any
  for (const p of await Promise.all(polls)) {
    t.equal(p.status, 200)
    t.same(
      p.body.signals.map((s: any) => s.id),
      [sent.signal.id],
      'every client gets the signal',
    )
  }
})

t.test('a burst of proxied requests for one board costs one registry lookup, not one each', async (t) => {
  const board = await startTestBoard(t)
  // the burst comes from one address: its in-flight slots are off here (proxy-fairness.test.ts holds them)
  const agg = await startTestAggregator(t, { AGGREGATOR_PROXY_PER_ADDRESS_MAX: '0' }, { follow: false })
  t.equal((await agg.register(board.url)).status, 201)
  const burst = () =>
    Promise.all(Array.from({ length: 200 }, () => fetch(`${agg.url}/sw/${board.authority}/sw/stats`).then((r) => r.status)))
  await burst() // opens the connections, so the next burst arrives together, as re-polling followers do
  t.equal(
    (await agg.register(board.url)).status,
    200,
    'registered again: the proxy forgets what it knew of the board, as when its entry expires',
  )
  const queries = async () =>
    Number(
      /^wire_db_query_duration_seconds_count\{pool="wire-aggregator",op="query"\} (\d+)$/m.exec(
        await (await fetch(`${agg.url}/metrics`)).text(),
      )?.[1],
    )
  const before = await queries()
  t.same([...new Set(await burst())], [200], 'all answered')
  const lookups = (await queries()) - before
  // one lookup; a re-check running meanwhile may add its few
  t.ok(lookups <= 5, `the aggregator's database saw ${lookups} queries for 200 requests`)
})

t.test('a malformed wait (a broken percent escape) is the board’s to refuse: 400 through the proxy as direct, never 500', async (t) => {
  const board = await startTestBoard(t)
  const agg = await startTestAggregator(t, {}, { follow: false })
  t.equal((await agg.register(board.url)).status, 201)
  const query = '/sw/signals?cursor=0&wait=%E0'
  const direct = await fetch(`${board.url}${query}`)
  const proxied = await fetch(`${agg.url}/sw/${board.authority}${query}`)
  t.equal(proxied.status, direct.status, `the board's own answer (${direct.status})`)
  t.ok(proxied.status >= 400 && proxied.status < 500, 'a 4xx')
  t.equal(((await proxied.json()) as any).error?.code, ((await direct.json()) as any).error?.code, "the board's error code")
})
