import t from 'tap'
import { openInfra } from '../../libs/shared/context/index.js'
import { createLogger } from '../../libs/shared/log/index.js'
import { publishSignal } from '../../libs/shared/publish/index.js'
import { startStack } from '../helpers/stack.js'
import { readerOn, writerOn } from '../helpers/roles.js'
import { everyFollowerSawAll, jitterCommits } from '../helpers/cursor-promise.js'

// docs/architecture.md "The feed invariant": many concurrent publishers whose insert transactions
// stall for random times (a trigger in the test's schema sleeps 0–4 ms before each commit), spread
// over four independent writers (each with its own pool, as
// separate writer processes would be); followers that only keep nextCursor — long-polling and
// plain polling, on two readers — must see every acknowledged signal exactly once, in seq order.

const PUBLISHERS = 12
const PER_PUBLISHER = 30
const WRITERS = 4

t.test('followers see every acknowledged signal exactly once and in seq order', async (t) => {
  const s = await startStack(t, {
    env: { PUBLISH_RATE_LIMIT_MAX: '100000' },
    seed: (infra, schema) => jitterCommits(infra.primary, schema),
  })
  const log = createLogger('server', 'silent')

  // three more writers and a second reader, each on its own connections
  const writers = [s.writer]
  const extra = await Promise.all(Array.from({ length: WRITERS - 1 + 1 }, () => openInfra(s.cfg, log)))
  t.teardown(async () => {
    for (const i of extra) await i.close()
  })
  for (const infra of extra.slice(0, WRITERS - 1)) writers.push(await writerOn(s.cfg, log, infra))
  const reader2 = await readerOn(s.cfg, log, extra[WRITERS - 1]!, { fallbackPollMs: 200 })
  t.teardown(() => reader2.close())

  const acked: string[] = []
  let target = Infinity // the last acknowledged seq, once publishing is over (seq is dense from 1)
  let giveUpAt = Infinity
  const start = async () => {
    const publishers = Array.from({ length: PUBLISHERS }, async (_, p) => {
      for (let i = 0; i < PER_PUBLISHER; i++) {
        const writer = writers[(p + i) % writers.length]!
        const sig = await publishSignal(
          writer.publisher.deps,
          { address: `10.0.0.${p}`, authorization: `Bearer publisher-${p}-token` },
          JSON.stringify({ $type: 'broadcast', p, i }),
        )
        acked.push(sig.id)
        if (Math.random() < 0.3) await new Promise((r) => setTimeout(r, Math.random() * 5))
      }
    })
    await Promise.all(publishers)
    target = acked.length
    giveUpAt = Date.now() + 15_000
  }

  type Follower = { name: string; seen: string[] }
  type Read = (cursor: number) => Promise<{ signals: Array<{ id: string }>; nextCursor: number }>
  const follow = async (name: string, read: Read, cursor: number) => {
    const f: Follower = { name, seen: [] }
    let wentBack = 0
    for (;;) {
      const page = await read(cursor)
      if (page.nextCursor < cursor) wentBack++
      cursor = page.nextCursor
      for (const sig of page.signals) f.seen.push(sig.id)
      if (cursor >= target || Date.now() > giveUpAt) break
      if (!page.signals.length) await new Promise((r) => setTimeout(r, 5)) // a polite client between empty polls
    }
    t.equal(wentBack, 0, `${name}: nextCursor never went back`)
    return f
  }
  const viaHttp = (wait: number) => async (cursor: number) =>
    (await s.app.inject({ url: cursor < 0 ? '/sw/signals?limit=1' : `/sw/signals?cursor=${cursor}&limit=37&wait=${wait}` })).json()
  const viaReader2 = async (cursor: number) => {
    const q = {
      cursor: cursor < 0 ? null : cursor,
      limit: 23,
      waitMs: 1000,
      type: null,
      tags: [],
      origin: null,
      q: null,
      sinceMs: null,
      includeExpired: false,
      refId: null,
    }
    const page = await reader2.readSide.feed.read(q)
    return { signals: page.signals.map((j) => JSON.parse(j) as { id: string }), nextCursor: page.nextCursor }
  }
  const kinds: Array<[string, Read]> = [
    ['long-poll follower', viaHttp(2)],
    ['wait=0 follower', viaHttp(0)],
    ['second reader', viaReader2],
  ]
  // every follower bootstraps (no cursor) before the first publish: the feed is empty, its head 0
  const cursors = await Promise.all(kinds.map(async ([, read]) => (await read(-1)).nextCursor))
  t.same(cursors, [0, 0, 0], 'followers start at the empty head')
  const followers = kinds.map(([name, read], i) => follow(name, read, cursors[i]!))
  await start()
  const results = await Promise.all(followers)

  t.equal(acked.length, PUBLISHERS * PER_PUBLISHER, 'every publish was acknowledged')
  const seqs = await everyFollowerSawAll(t, s.infra.primary, s.schema, acked, results)
  t.same(
    seqs,
    seqs.map((_, i) => i + 1),
    'seq is dense: 1..n with no gaps',
  )
})
