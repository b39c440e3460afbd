import t, { type Test } from 'tap'
import { startReader } from '../../apps/reader/app.js'
import { createLogger } from '../../libs/shared/log/index.js'
import { startStack, type Stack } from '../helpers/stack.js'
import { until } from '../helpers/wait.js'

// The read side over HTTP: GET /sw/signals and every parameter, by id, thread, tags, board
// metadata, discovery, health, aliases, JSON 404/405, CORS and long-poll headers.

const ADMIN = { authorization: 'Bearer admin-secret-token' }
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const errorOf = (res: { statusCode: number; json: () => any }) => ({ status: res.statusCode, code: res.json()?.error?.code })
const backdate = (s: Stack, id: string) =>
  s.infra.primary.query(`update "${s.schema}".signals set expires_at = now() - interval '1 minute' where id = $1`, [id])

interface Sig {
  id: string
  createdAt: string
  origin: string
  [k: string]: unknown
}

/**
 * The filter matrix, on a fresh board. Run once against the reader's in-memory tail and once
 * against SQL (a tail of 0), since each filter is implemented in both places.
 */
async function filterSuite(t: Test, s: Stack, label: string) {
  const A = 'reader-agent-aaaa'
  const B = 'reader-agent-bbbb'
  const sigs: Sig[] = []
  const cursors: number[] = []
  const pub = async (body: object, token: string) => {
    const res = await s.publish(body, token)
    t.equal(res.statusCode, 200)
    sigs.push(res.json().signal)
    cursors.push(res.json().cursor)
    await sleep(3) // `since` is about createdAt itself: distinct milliseconds are the thing under test
  }
  await pub({ $type: 'offer', $tags: ['GPU', 'ops'], text: 'Selling 100% Pure_Compute' }, A) // 0
  await pub({ $type: 'request', $tags: ['gpu'], text: 'need compute' }, B) // 1
  await pub({ $type: 'broadcast', $tags: ['news'], text: 'Hello World' }, A) // 2
  await pub({ $type: 'offer', $tags: ['storage'], text: 'disk 50% off' }, B) // 3
  await pub({ $type: 'reply', $refId: sigs[0]!.id, text: 'interested' }, A) // 4
  const idx = (page: { signals: Sig[] }) => page.signals.map((x) => sigs.findIndex((y) => y.id === x.id))
  const ids = async (query: string) => {
    const res = await s.app.inject({ url: `/sw/signals?${query}` })
    t.equal(res.statusCode, 200, query)
    return idx(res.json())
  }

  t.test(`${label}: no parameters gives the newest page oldest-first, nextCursor = head`, async (t) => {
    const page = await s.read()
    t.same(Object.keys(page), ['signals', 'nextCursor', 'serverNow'])
    t.same(idx(page), [0, 1, 2, 3, 4])
    t.equal(page.nextCursor, 5)
    t.type(page.nextCursor, 'number')
    t.ok(Math.abs(Date.parse(page.serverNow) - Date.now()) < 5000, 'serverNow is the server clock')
    t.same(page.signals[4], sigs[4], 'signals in the feed are the emitted signals')
  })
  t.test(`${label}: limit picks the newest, still oldest-first; clamps to 1..100`, async (t) => {
    const two = await s.read('limit=2')
    t.same(idx(two), [3, 4])
    t.equal(two.nextCursor, 5, 'the bootstrap cursor is the head, whatever the limit')
    t.same(await ids('limit=0'), [4])
    t.same(await ids('limit=-3'), [4])
    t.same(await ids('limit=1000'), [0, 1, 2, 3, 4])
  })
  t.test(`${label}: cursor pages forward and sees everything exactly once`, async (t) => {
    let cursor = 0
    const seen: number[] = []
    for (let i = 0; i < 5; i++) {
      const page = await s.read(`cursor=${cursor}&limit=2`)
      seen.push(...idx(page))
      t.ok(page.nextCursor >= cursor, 'nextCursor never moves back')
      cursor = page.nextCursor
    }
    t.same(seen, [0, 1, 2, 3, 4])
    t.equal(cursor, 5)
    const atHead = await s.read('cursor=5')
    t.same([atHead.signals, atHead.nextCursor], [[], 5], 'at the head: nothing new, same cursor')
  })
  t.test(`${label}: a filtered follower sees each match once and ends at the head`, async (t) => {
    let cursor = 0
    const seen: number[] = []
    for (let i = 0; i < 4; i++) {
      const page = await s.read(`type=offer&cursor=${cursor}&limit=1`)
      seen.push(...idx(page))
      cursor = page.nextCursor
    }
    t.same(seen, [0, 3])
    t.equal(cursor, 5)
  })
  t.test(`${label}: type is exact`, async (t) => {
    t.same(await ids('type=offer'), [0, 3])
    t.same(await ids('type=Offer'), [])
    t.same(await ids('type=off'), [])
    t.same(await ids('type=%20offer%20'), [0, 3], 'the parameter is trimmed')
  })
  t.test(`${label}: tag is normalised and several tags match with OR`, async (t) => {
    t.same(await ids('tag=gpu'), [0, 1])
    t.same(await ids('tag=%20GPU%20'), [0, 1])
    t.same(await ids('tag=news&tag=storage'), [2, 3])
    t.same(await ids('tag=news,storage'), [2, 3])
    t.same(await ids('tag=NEWS,nope&tag=ops'), [0, 2])
    t.same(await ids('tag=nope'), [])
    t.same(await ids('tag=gp'), [], 'whole tags, not prefixes')
  })
  t.test(`${label}: q is a case-insensitive substring; % and _ are literal`, async (t) => {
    t.same(await ids('q=hello'), [2])
    t.same(await ids('q=HELLO%20world'), [2])
    t.same(await ids('q=compute'), [0, 1])
    t.same(await ids(`q=${encodeURIComponent('100%')}`), [0])
    t.same(await ids(`q=${encodeURIComponent('%')}`), [0, 3])
    t.same(await ids('q=e_c'), [0])
    t.same(await ids(`q=${encodeURIComponent('pure%compute')}`), [], '% is no wildcard')
    t.same(await ids('q=d_sk'), [], '_ is no wildcard')
    t.same(await ids('q=STORAGE'), [3], 'tags are searched')
    t.same(await ids('q=request'), [1], 'the type is searched')
    t.same(await ids(`q=${sigs[1]!.origin.slice(3, 15)}`), [1, 3], 'the origin is searched')
    t.same(await ids('q=interested&type=reply'), [4], 'combines with other filters')
  })
  t.test(`${label}: origin is exact`, async (t) => {
    t.same(await ids(`origin=${sigs[0]!.origin}`), [0, 2, 4])
    t.same(await ids(`origin=${sigs[1]!.origin}`), [1, 3])
    t.same(await ids(`origin=${sigs[0]!.origin.slice(0, 10)}`), [])
  })
  t.test(`${label}: ref selects the direct replies of a signal, by id or sw:// URI`, async (t) => {
    t.same(await ids(`ref=${sigs[0]!.id}`), [4])
    t.same(await ids(`ref=${encodeURIComponent(String(sigs[0]!.uri))}`), [4], 'a URI of this board')
    t.same(await ids(`ref=${sigs[1]!.id}`), [], 'a signal without replies')
    t.same(await ids(`ref=${sigs[0]!.id}&cursor=${cursors[3]}`), [4], 'combines with a cursor')
    t.same(await ids(`ref=${sigs[0]!.id}&cursor=${cursors[4]}`), [], 'nothing after the reply')
    for (const bad of ['not-an-id', `sw://other.board/signals/${sigs[0]!.id}`]) {
      const res = await s.app.inject({ url: `/sw/signals?ref=${encodeURIComponent(bad)}` })
      t.same(errorOf(res), { status: 400, code: 'invalid_request' }, bad)
    }
  })
  t.test(`${label}: since takes an ISO timestamp, Unix seconds or a duration, strictly after`, async (t) => {
    const c2 = sigs[2]!.createdAt
    t.same(await ids(`since=${c2}`), [3, 4], 'ISO 8601')
    t.same(await ids(`since=${encodeURIComponent(new Date(Date.parse(c2) - 1).toISOString())}`), [2, 3, 4])
    t.same(await ids(`since=${(Date.parse(c2) / 1000).toFixed(3)}`), [3, 4], 'Unix seconds with milliseconds')
    t.same(await ids(`since=${Math.floor(Date.parse(sigs[0]!.createdAt) / 1000) - 1}`), [0, 1, 2, 3, 4], 'whole Unix seconds')
    t.same(await ids('since=1h'), [0, 1, 2, 3, 4], 'a duration')
    t.same(await ids('since=1d&type=offer'), [0, 3])
    t.same(await ids('since=2999-01-01T00:00:00Z'), [])
    t.same(await ids('since=999999999d'), [0, 1, 2, 3, 4], 'a window longer than history is everything')
  })
  t.test(`${label}: expired signals leave the feed, includeExpired=1 brings them back, pinned ones stay`, async (t) => {
    await backdate(s, sigs[3]!.id)
    await backdate(s, sigs[2]!.id)
    await s.app.inject({ method: 'POST', url: `/sw/admin/signals/${sigs[2]!.id}/pin`, headers: ADMIN })
    // a running tail keeps the expiresAt it loaded (rows never change it); a reader started after
    // the backdate loads the rows as they are now and then judges expiry in memory
    const app = label === 'database' ? s.app : await freshReader(t, s)
    const get = async (q: string) => idx((await app.inject({ url: `/sw/signals?${q}` })).json())
    t.same(await get(''), [0, 1, 2, 4], 'expired left the feed, pinned stayed')
    t.same(await get('includeExpired=1'), [0, 1, 2, 3, 4])
    t.same(await get('type=offer'), [0])
    t.same(await get('type=offer&includeExpired=1'), [0, 3])
    t.same(await get('cursor=0&limit=100'), [0, 1, 2, 4], 'and when following')
    const byId = await app.inject({ url: `/sw/signals/${sigs[3]!.id}` })
    t.equal(byId.statusCode, 200, 'an expired signal not yet swept is still served by id')
    const pinned = (await app.inject({ url: '/sw/signals' })).json().signals.find((x: Sig) => x.id === sigs[2]!.id)
    t.match(pinned, { pinned: true })
  })
}

/** A second reader on the same database, started now, so its tail holds the rows as they are now. */
async function freshReader(t: Test, s: Stack) {
  const { app, close } = await startReader(s.cfg, createLogger('reader', 'silent'))
  t.teardown(close)
  return app
}

t.test('reading from the database path (tail of 0)', async (t) => {
  const s = await startStack(t, { overrides: { tailSize: 0 } })
  await filterSuite(t, s, 'database')
})

t.test('reading from the in-memory tail', async (t) => {
  const s = await startStack(t)
  await filterSuite(t, s, 'tail')

  t.test('a long history pages forward exactly once in seq order', async (t) => {
    const start = (await s.read()).nextCursor
    const published = await Promise.all(Array.from({ length: 30 }, (_, i) => s.publish({ $type: 'paging', i }, `pager-token-${i % 3}`)))
    const want = published.map((r) => r.json().signal.id)
    let cursor = start
    const seen: string[] = []
    for (let i = 0; i < 10 && seen.length < 30; i++) {
      const page = await s.read(`cursor=${cursor}&limit=7&type=paging`)
      seen.push(...page.signals.map((x: Sig) => x.id))
      cursor = page.nextCursor
    }
    t.equal(seen.length, 30)
    t.same([...seen].sort(), [...want].sort(), 'every signal once')
    const seqOrder = (await s.read('type=paging&limit=100')).signals.map((x: Sig) => x.id)
    t.same(seen, seqOrder, 'in feed order')
  })

  t.test('a cursor beyond the head answers an empty page', async (t) => {
    const res = await s.app.inject({ url: '/sw/signals?cursor=999999' })
    t.equal(res.statusCode, 200)
    t.same(res.json().signals, [])
  })

  t.test('by id', async (t) => {
    const root = (await s.publish({ $type: 'request', $tags: ['byid'], text: 'root' })).json().signal
    const r1 = (await s.publish({ $type: 'reply', $refId: root.id, n: 1 })).json().signal
    const r2 = (await s.publish({ $type: 'reply', $refId: root.uri, n: 2 })).json().signal
    const nested = (await s.publish({ $type: 'reply', $refId: r1.id, n: 3 })).json().signal

    t.test('GET /sw/signals/{id} is {signal, replies, serverNow}, replies direct and oldest-first', async (t) => {
      const res = await s.app.inject({ url: `/sw/signals/${root.id}` })
      t.equal(res.statusCode, 200)
      const body = res.json()
      t.same(Object.keys(body), ['signal', 'replies', 'serverNow'])
      t.same(body.signal, root)
      t.same(
        body.replies.map((x: Sig) => x.id),
        [r1.id, r2.id],
      )
      t.notOk(
        body.replies.some((x: Sig) => x.id === nested.id),
        'a reply to a reply is not a direct reply',
      )
      t.match(body.serverNow, /Z$/)
    })
    t.test('the id may be a URL-encoded or plain sw:// URI', async (t) => {
      for (const url of [
        `/sw/signals/${encodeURIComponent(root.uri)}`,
        `/sw/signals/${root.uri}`,
        `/sw/v1/signals/${encodeURIComponent(root.uri)}`,
      ]) {
        const res = await s.app.inject({ url })
        t.equal(res.statusCode, 200, url)
        t.equal(res.json().signal.id, root.id)
      }
    })
    t.test('/thread is the root and all descendants, any depth, oldest-first', async (t) => {
      const deeper = (await s.publish({ $type: 'reply', $refId: nested.id, n: 4 })).json().signal
      const deepest = (await s.publish({ $type: 'reply', $refId: deeper.id, n: 5 })).json().signal
      const res = await s.app.inject({ url: `/sw/signals/${root.id}/thread` })
      t.equal(res.statusCode, 200)
      t.same(Object.keys(res.json()), ['signals'])
      t.same(
        res.json().signals.map((x: Sig) => x.id),
        [root.id, r1.id, r2.id, nested.id, deeper.id, deepest.id],
      )
      const sub = (await s.app.inject({ url: `/sw/signals/${r1.id}/thread` })).json().signals.map((x: Sig) => x.id)
      t.same(sub, [r1.id, nested.id, deeper.id, deepest.id], 'a thread from a reply down')
      for (const url of [
        `/sw/signals/${encodeURIComponent(root.uri)}/thread`,
        `/sw/signals/${root.uri}/thread`,
        `/sw/v1/signals/${root.id}/thread`,
      ])
        t.equal((await s.app.inject({ url })).json().signals.length, 6, url)
    })
    t.test('an expired signal not yet swept is still served by id, with its thread', async (t) => {
      await backdate(s, r2.id)
      const res = await s.app.inject({ url: `/sw/signals/${r2.id}` })
      t.equal(res.statusCode, 200)
      t.equal(res.json().signal.id, r2.id)
      t.ok(
        (await s.app.inject({ url: `/sw/signals/${root.id}` })).json().replies.some((x: Sig) => x.id === r2.id),
        'still among the replies',
      )
    })
    t.test('an unknown id is 404 not_found, for the signal and its thread', async (t) => {
      for (const id of [
        'AAAAAAAAAAAAAAAAAAAA',
        'nope',
        encodeURIComponent(`sw://other.example/signals/${root.id}`),
        `sw://other.example/signals/${root.id}`,
      ]) {
        t.same(errorOf(await s.app.inject({ url: `/sw/signals/${id}` })), { status: 404, code: 'not_found' }, id)
        t.same(errorOf(await s.app.inject({ url: `/sw/signals/${id}/thread` })), { status: 404, code: 'not_found' }, `${id}/thread`)
      }
    })
  })

  t.test('GET /sw/tags counts tags over active signals, most used first', async (t) => {
    for (const tags of [['zeta', 'zulu'], ['zeta'], ['zeta', 'zoo'], ['zulu']]) await s.publish({ $type: 'tagged', $tags: tags })
    const old = (await s.publish({ $type: 'tagged', $tags: ['zzexpired'] })).json().signal
    await backdate(s, old.id)
    const res = await s.app.inject({ url: '/sw/tags?q=Z' })
    t.equal(res.statusCode, 200)
    t.same(res.json(), {
      tags: [
        { tag: 'zeta', count: 3 },
        { tag: 'zulu', count: 2 },
        { tag: 'zoo', count: 1 },
      ],
    })
    t.same((await s.app.inject({ url: '/sw/tags?q=zu' })).json(), { tags: [{ tag: 'zulu', count: 2 }] }, 'q is a prefix')
    t.same((await s.app.inject({ url: '/sw/tags?q=z&limit=1' })).json(), { tags: [{ tag: 'zeta', count: 3 }] })
    const all = (await s.app.inject({ url: '/sw/v1/tags' })).json().tags
    t.ok(all.length > 3 && all.every((x: { count: number }, i: number) => i === 0 || all[i - 1].count >= x.count), 'sorted by count')
  })

  t.test('GET /sw/wire is the board metadata with live counts', async (t) => {
    const before = (await s.app.inject({ url: '/sw/wire' })).json()
    t.same(Object.keys(before).sort(), ['allowedSignalTypes', 'authority', 'description', 'name', 'stats', 'uri'])
    t.match(before, { uri: 'sw://localhost:4000', authority: 'localhost:4000', name: 'main', description: null, allowedSignalTypes: null })
    t.same(Object.keys(before.stats).sort(), ['activeIdentities', 'activeSignals', 'recentPollers'])

    const a = (await s.publish({ $type: 'counted' }, 'stats-token-new-1')).json().signal
    await s.publish({ $type: 'counted' }, 'stats-token-new-1')
    await s.app.inject({ url: '/sw/signals?limit=1', headers: { authorization: 'Bearer poller-token-one' } })
    await s.app.inject({ url: '/sw/signals?limit=1', headers: { authorization: 'Bearer poller-token-two' } })
    await s.app.inject({ url: '/sw/signals?limit=1', headers: { authorization: 'Bearer poller-token-two' } })
    let after = (await s.app.inject({ url: '/sw/wire' })).json()
    t.equal(after.stats.activeSignals, before.stats.activeSignals + 2)
    t.equal(after.stats.activeIdentities, before.stats.activeIdentities + 1)
    t.equal(after.stats.recentPollers, before.stats.recentPollers + 2, 'a bearer token on a read counts its identity once')
    await backdate(s, a.id)
    after = (await s.app.inject({ url: '/sw/v1/wire' })).json()
    t.equal(after.stats.activeSignals, before.stats.activeSignals + 1, 'an expired signal is not active')
  })

  t.test('GET /sw/stats answers bucketed activity counts', async (t) => {
    const res = await s.app.inject({ url: '/sw/stats?bucketSeconds=60&buckets=6' })
    t.equal(res.statusCode, 200)
    const body = res.json()
    t.same(Object.keys(body).sort(), ['bucketSeconds', 'buckets', 'current', 'generatedAt'])
    t.equal(body.bucketSeconds, 60)
    t.equal(body.buckets.length, 6)
    t.same(Object.keys(body.current).sort(), ['activeIdentities', 'activeSignals', 'recentPollers'])
    for (const b of body.buckets) {
      t.equal(Date.parse(b.at) % 60_000, 0, 'aligned to the epoch')
      t.type(b.signals, 'number')
      t.type(b.identities, 'number')
    }
    t.ok(body.buckets.at(-1).signals > 0, 'the last bucket holds this minute')
    const clamped = (await s.app.inject({ url: '/sw/stats?bucketSeconds=1&buckets=1000' })).json()
    t.equal(clamped.bucketSeconds, 60)
    t.equal(clamped.buckets.length, 120)
  })

  t.test('GET /.well-known/wire is the discovery document', async (t) => {
    const res = await s.app.inject({ url: '/.well-known/wire' })
    t.equal(res.statusCode, 200)
    const d = res.json()
    t.equal(d.protocol, 'wire')
    t.equal(d.version, '1')
    t.same(d.subwires, [{ authority: 'localhost:4000', uri: 'sw://localhost:4000', name: 'main', description: null }])
    t.same(d.subwire, d.subwires[0], "the reference server's single subwire object: the same board")
    t.equal(d.api, 'http://localhost:4000/sw')
    t.equal(d.identity, null)
    t.equal(d.identityMode, 'local')
    t.same(d.limits, { ttlMin: 10, ttlMax: 86400, maxPayloadBytes: 16384, maxLimit: 100 })
    t.ok(Array.isArray(d.features))
    for (const f of ['signals', 'poll', 'search', 'tags']) t.ok(d.features.includes(f), `feature ${f}`)
    for (const f of d.features) t.ok(['signals', 'poll', 'stats', 'search', 'tags', 'mcp', 'a2a'].includes(f), `known feature ${f}`)
    if (d.features.includes('mcp')) t.equal(d.mcp, 'http://localhost:4000/mcp', 'mcp is served, so linked')
    else t.notOk('mcp' in d, 'no mcp link without the mcp feature')
    if (d.features.includes('stats')) t.equal((await s.app.inject({ url: '/sw/stats' })).statusCode, 200, 'stats is really served')
  })

  t.test('liveness and readiness', async (t) => {
    t.same((await s.app.inject({ url: '/' })).json(), { name: 'wire', status: 'live' })
    t.same((await s.app.inject({ url: '/healthz' })).json(), { ok: true })
    const ready = await s.app.inject({ url: '/readyz' })
    t.equal(ready.statusCode, 200)
    t.match(ready.json(), { ok: true })
  })

  t.test('/sw/v1 serves exactly what /sw serves', async (t) => {
    const sig = (await s.publish({ $type: 'alias', $tags: ['alias'] })).json().signal
    const noNow = (body: string) => body.replace(/"serverNow":"[^"]+"/, '').replace(/"generatedAt":"[^"]+"/, '')
    for (const path of [
      '/signals',
      '/signals?type=alias',
      '/signals?cursor=0&limit=3',
      `/signals/${sig.id}`,
      `/signals/${sig.id}/thread`,
      '/tags?q=al',
      '/wire',
      '/signals/AAAAAAAAAAAAAAAAAAAA',
      '/signals?limit=x',
    ]) {
      const a = await s.app.inject({ url: `/sw${path}` })
      const b = await s.app.inject({ url: `/sw/v1${path}` })
      t.equal(b.statusCode, a.statusCode, path)
      t.equal(noNow(b.body), noNow(a.body), path)
    }
  })

  t.test('an unknown route is 404 not_found as JSON', async (t) => {
    for (const url of ['/nope', '/sw/nope', '/sw/v2/signals', '/sw/admin', '/.well-known/other']) {
      const res = await s.app.inject({ url })
      t.same(errorOf(res), { status: 404, code: 'not_found' }, url)
      t.match(res.headers['content-type'], /^application\/json/)
    }
  })

  t.test('a known path with the wrong method is 405 method_not_allowed as JSON, with Allow', async (t) => {
    const cases: Array<[string, string, string[]]> = [
      ['PUT', '/sw/signals', ['GET', 'POST']],
      ['DELETE', '/sw/signals', ['GET', 'POST']],
      ['POST', '/sw/signals/AAAAAAAAAAAAAAAAAAAA', ['GET']],
      ['POST', '/sw/wire', ['GET']],
      ['POST', '/.well-known/wire', ['GET']],
      ['DELETE', '/sw/v1/tags', ['GET']],
      ['GET', '/sw/admin/rules/rl_x', ['DELETE']],
      ['PUT', '/sw/admin/wire', ['GET', 'PATCH']],
    ]
    for (const [method, url, allow] of cases) {
      const res = await s.app.inject({ method: method as 'GET', url })
      t.same(errorOf(res), { status: 405, code: 'method_not_allowed' }, `${method} ${url}`)
      t.same(String(res.headers.allow).split(/,\s*/).sort(), allow.sort(), `Allow for ${method} ${url}`)
    }
  })

  t.test('CORS', async (t) => {
    t.test('every answer allows any origin and exposes Retry-After', async (t) => {
      for (const url of ['/sw/signals', '/sw/nope', '/.well-known/wire', '/sw/signals/AAAAAAAAAAAAAAAAAAAA']) {
        const res = await s.app.inject({ url, headers: { origin: 'https://viewer.example' } })
        t.equal(res.headers['access-control-allow-origin'], '*', url)
        t.match(String(res.headers['access-control-expose-headers']), /Retry-After/i, url)
      }
      const pub = await s.app.inject({
        method: 'POST',
        url: '/sw/signals',
        headers: { origin: 'https://viewer.example', ...s.bearer() },
        payload: { $type: 'cors' },
      })
      t.equal(pub.headers['access-control-allow-origin'], '*', 'a publish too')
    })
    t.test('a preflight for a POST with Authorization is allowed', async (t) => {
      for (const [method, url] of [
        ['POST', '/sw/signals'],
        ['PATCH', '/sw/admin/wire'],
        ['DELETE', '/sw/admin/rules/rl_x'],
        ['GET', '/sw/signals'],
      ]) {
        const res = await s.app.inject({
          method: 'OPTIONS',
          url: url!,
          headers: {
            origin: 'https://viewer.example',
            'access-control-request-method': method!,
            'access-control-request-headers': 'authorization, content-type',
          },
        })
        t.ok(res.statusCode === 204 || res.statusCode === 200, `${method} ${url} preflight answered ${res.statusCode}`)
        t.equal(res.headers['access-control-allow-origin'], '*')
        t.match(String(res.headers['access-control-allow-methods']), new RegExp(method!), `${method} allowed`)
        t.match(String(res.headers['access-control-allow-headers']).toLowerCase(), /authorization/)
        t.match(String(res.headers['access-control-allow-headers']).toLowerCase(), /content-type/)
      }
    })
  })

  t.test('long-polls', async (t) => {
    t.test('a poll that waits to its deadline answers {signals:[], nextCursor} with Cache-Control: no-store', async (t) => {
      const head = (await s.read()).nextCursor
      const t0 = Date.now()
      const res = await s.app.inject({ url: `/sw/signals?cursor=${head}&wait=1` })
      t.ok(Date.now() - t0 >= 900, 'it waited')
      t.equal(res.statusCode, 200)
      t.equal(res.headers['cache-control'], 'no-store')
      t.same(res.json().signals, [])
      t.equal(res.json().nextCursor, head)
    })
    t.test('a matching publish wakes it at once; a non-matching one does not', async (t) => {
      const head = (await s.read()).nextCursor
      const t0 = Date.now()
      const poll = s.app.inject({ url: `/sw/signals?cursor=${head}&wait=5&tag=wakeme` }).then((r) => r)
      await until(() => s.reader.readSide.feed.waiting === 1)
      await s.publish({ $type: 'broadcast', $tags: ['other'] })
      await until(() => s.reader.readSide.feed.head === head + 1)
      t.equal(s.reader.readSide.feed.waiting, 1, 'the other tag did not answer it')
      const sig = (await s.publish({ $type: 'broadcast', $tags: ['wakeme'] })).json().signal
      const res = await poll
      t.ok(Date.now() - t0 < 2500, 'woken, not timed out')
      t.equal(res.headers['cache-control'], 'no-store')
      t.same(
        res.json().signals.map((x: Sig) => x.id),
        [sig.id],
      )
      t.equal(res.json().nextCursor, head + 2)
    })
    t.test('a publish answers its feed position: reading replies from it waits for exactly them', async (t) => {
      const req = (await s.publish({ $type: 'request', text: 'who can help?' })).json()
      t.type(req.cursor, 'number')
      t.equal(req.cursor, (await s.read()).nextCursor, 'the cursor is the new head')
      const poll = s.app.inject({ url: `/sw/signals?ref=${req.signal.id}&cursor=${req.cursor}&wait=5` }).then((r) => r.json())
      await s.publish({ $type: 'broadcast', text: 'unrelated' })
      const reply = (await s.publish({ $type: 'reply', $refId: req.signal.id, text: 'me' })).json()
      t.equal(reply.cursor, req.cursor + 2)
      const page = await poll
      t.same(
        page.signals.map((x: Sig) => x.id),
        [reply.signal.id],
      )
    })
    t.test('wait above 25 is clamped, not refused', async (t) => {
      const res = await s.app.inject({ url: '/sw/signals?cursor=0&limit=1&wait=100' })
      t.equal(res.statusCode, 200)
      t.equal(res.json().signals.length, 1, 'answered at once: there was something to answer')
    })
  })
})

t.test('the authority comes from PUBLIC_WIRE_HOST, never from the Host header', async (t) => {
  const s = await startStack(t, { env: { PUBLIC_WIRE_HOST: 'Wire.Example.COM' } })
  const sig = (await s.publish({ $type: 'broadcast' })).json().signal
  t.equal(sig.uri, `sw://wire.example.com/signals/${sig.id}`)
  const d = (await s.app.inject({ url: '/.well-known/wire', headers: { host: 'evil.example', 'x-forwarded-host': 'evil.example' } })).json()
  t.same(d.subwires, [{ authority: 'wire.example.com', uri: 'sw://wire.example.com', name: 'main', description: null }])
  t.same(d.subwire, d.subwires[0])
  t.equal(d.api, 'https://wire.example.com/sw')
  const w = (await s.app.inject({ url: '/sw/wire', headers: { host: 'evil.example' } })).json()
  t.match(w, { authority: 'wire.example.com', uri: 'sw://wire.example.com' })
  const byUri = await s.app.inject({ url: `/sw/signals/${encodeURIComponent(`sw://WIRE.example.com/signals/${sig.id}`)}` })
  t.equal(byUri.statusCode, 200, 'a URI with the authority in another case still names this board')
})

t.test('a waiting long-poll is answered at once when the board shuts down', async (t) => {
  const s = await startStack(t)
  const head = (await s.read()).nextCursor
  // presence is recorded without holding the read up (Redis): wait for it to land
  const pollers = async () => (await s.app.inject({ url: '/sw/wire' })).json().stats.recentPollers
  await until(async () => (await pollers()) === 1, 5000, 'the anonymous reader to be counted')
  t.equal(await pollers(), 1, 'an anonymous reader counts by its address')
  const t0 = Date.now()
  const poll = s.app.inject({ url: `/sw/signals?cursor=${head}&wait=5` }).then((r) => r)
  await until(() => s.reader.readSide.feed.waiting === 1)
  await s.app.close()
  const res = await poll
  t.ok(Date.now() - t0 < 2000, `answered in ${Date.now() - t0} ms, not at the deadline`)
  t.equal(res.statusCode, 200)
  t.same([res.json().signals, res.json().nextCursor], [[], head])
})
