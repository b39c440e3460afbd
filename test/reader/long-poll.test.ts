import t from 'tap'
import { openInfra } from '../../libs/shared/context/index.js'
import { createLogger } from '../../libs/shared/log/index.js'
import { publishSignal } from '../../libs/shared/publish/index.js'
import { startStack } from '../helpers/stack.js'
import { until } from '../helpers/wait.js'
import { writerOn } from '../helpers/roles.js'

t.test('long-polls', async (t) => {
  // a 10 s fallback timer: a prompt answer can only come from the wake-up
  const s = await startStack(t, { overrides: { fallbackPollMs: 10_000 } })
  const head = async () => (await s.read()).nextCursor as number
  const waiting = (n: number) => until(() => s.reader.readSide.feed.waiting === n, 5000, `${n} waiting long-poll(s)`)

  t.test('a publish wakes a waiting long-poll promptly', async (t) => {
    const cursor = await head()
    const t0 = Date.now()
    const poll = s.app.inject({ url: `/sw/signals?cursor=${cursor}&wait=5` }).then((r) => r.json())
    await waiting(1)
    t.equal((await s.publish({ $type: 'broadcast', text: 'wake' })).statusCode, 200)
    const page = await poll
    t.match(page, { signals: [{ type: 'broadcast', payload: { text: 'wake' } }] })
    t.equal(page.nextCursor, cursor + 1)
    t.ok(Date.now() - t0 < 1500, `answered in ${Date.now() - t0} ms, not at the deadline`)
  })

  t.test('a long-poll ignores signals that do not match and answers the first that does', async (t) => {
    const cursor = await head()
    const poll = s.app.inject({ url: `/sw/signals?cursor=${cursor}&wait=5&tag=wanted` }).then((r) => r.json())
    await waiting(1)
    await s.publish({ $type: 'broadcast', $tags: ['other'], text: 'noise' })
    await until(() => s.reader.readSide.feed.head === cursor + 1, 5000, 'the tail to take in the noise')
    t.equal(s.reader.readSide.feed.waiting, 1, 'the noise did not answer the long-poll')
    await s.publish({ $type: 'broadcast', $tags: ['Wanted'], text: 'match' })
    const page = await poll
    t.equal(page.signals.length, 1, 'only the matching signal')
    t.equal(page.signals[0].payload.text, 'match')
    t.equal(page.nextCursor, cursor + 2, 'the cursor moves past the skipped signal too')
  })

  t.test('at the deadline a long-poll answers [] with a cursor it may keep', async (t) => {
    const cursor = await head()
    const t0 = Date.now()
    const r = await s.app.inject({ url: `/sw/signals?cursor=${cursor}&wait=1` })
    const ms = Date.now() - t0
    t.same(r.json().signals, [])
    t.equal(r.json().nextCursor, cursor)
    t.equal(r.headers['cache-control'], 'no-store')
    t.ok(ms >= 950 && ms < 3000, `waited ${ms} ms for wait=1`)
  })

  t.test('a filtered long-poll that saw nothing matching still advances its cursor', async (t) => {
    const cursor = await head()
    await s.publish({ $type: 'broadcast', $tags: ['other'], text: 'noise' })
    const r = (await s.app.inject({ url: `/sw/signals?cursor=${cursor}&wait=1&tag=never` })).json()
    t.same(r.signals, [])
    t.equal(r.nextCursor, cursor + 1, 'the non-matching signal is behind the follower now')
  })

  t.test('wait is clamped to 25 s and a cursor from nowhere comes back to the head at once', async (t) => {
    const h = await head()
    const t0 = Date.now()
    const r = (await s.app.inject({ url: `/sw/signals?cursor=${h + 1000}&wait=25` })).json()
    t.ok(Date.now() - t0 < 1000, 'no wait for a cursor beyond the head')
    t.same(r.signals, [])
    t.equal(r.nextCursor, h)
  })

  t.test('a publish through another writer process reaches the reader over Redis', async (t) => {
    const log = createLogger('writer', 'silent')
    const infra = await openInfra(s.cfg, log)
    t.teardown(() => infra.close())
    const other = await writerOn(s.cfg, log, infra)
    const cursor = await head()
    const t0 = Date.now()
    const poll = s.app.inject({ url: `/sw/signals?cursor=${cursor}&wait=5` }).then((r) => r.json())
    await waiting(1)
    await publishSignal(
      other.publisher.deps,
      { address: '127.0.0.1', authorization: 'Bearer other-writer-token' },
      '{"$type":"broadcast","via":"redis"}',
    )
    const page = await poll
    t.equal(page.signals[0]?.payload.via, 'redis')
    t.ok(Date.now() - t0 < 1500, `woken in ${Date.now() - t0} ms (fallback timer is 10 s)`)
  })
})

t.test('closing the server answers waiting long-polls at once', async (t) => {
  const s = await startStack(t)
  const { nextCursor } = await s.read()
  const polls = [1, 2, 3].map(() => s.app.inject({ url: `/sw/signals?cursor=${nextCursor}&wait=20` }).then((r) => r.json()))
  await until(() => s.reader.readSide.feed.waiting === 3)
  const t0 = Date.now()
  await s.app.close()
  const pages = await Promise.all(polls)
  t.ok(Date.now() - t0 < 2000, `answered ${Date.now() - t0} ms after close`)
  for (const p of pages) t.same(p, { signals: [], nextCursor, serverNow: p.serverNow })
})
