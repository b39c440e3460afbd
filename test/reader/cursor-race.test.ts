import t, { type Test } from 'tap'
import { startReader } from '../../apps/reader/app.js'
import { loadConfig } from '../../libs/shared/config/index.js'
import { createLogger } from '../../libs/shared/log/index.js'
import { startStack, type Stack } from '../helpers/stack.js'
import { TEST_DATABASE_URL } from '../helpers/services.js'
import { until } from '../helpers/wait.js'
import { readerOn } from '../helpers/roles.js'
import { holdQueriesWith } from '../helpers/held-db.js'

// The cursor promise at its sharpest edge: a long-poll whose first page comes from the database
// while a matching signal is published and taken into the tail. The interleaving is forced, not
// hoped for: the reader's database is the real one, but the answer of its page query for this
// request is held back until the signal has been pulled into the tail, then handed over. Before
// the redesign the poll registered at the stale page's cursor, missed the wake-up that had already
// happened, and at its deadline answered [] with a cursor past the signal: a skip.

const TOKEN = 'needle-7f3a9c' // the agent's own marker, as in `q=<its token>`

/** A second reader on the stack's database, with a small tail and its page queries for TOKEN held. */
async function heldReader(t: Test, s: Stack) {
  const hold = holdQueriesWith(s.infra.readDb, TOKEN.toLowerCase())
  const ctx = await readerOn(
    s.cfg,
    createLogger('reader', 'silent'),
    { ...s.infra, readDb: hold.db },
    { tailSize: 20, fallbackPollMs: 10_000 },
  )
  t.teardown(() => ctx.close())
  return { ctx, hold }
}

/** 200 signals that do not match, so a filtered read cannot be answered from a 20-signal tail alone. */
async function seedNoise(s: Stack) {
  for (let i = 0; i < 4; i++)
    await Promise.all(Array.from({ length: 50 }, (_, j) => s.publish({ $type: 'broadcast', text: `noise ${i}-${j}` }, `noise-agent-${j}`)))
}

// by text (`q`: a bounded scan) and by tag (the tag index, db/signals/page-sql.ts): both page paths
for (const variant of ['no cursor (the bootstrap page)', 'a cursor older than the tail'])
  for (const by of ['q', 'tag'] as const) {
    t.test(`${variant}, by ${by}: a match published during the page query is answered, never stepped over`, async (t) => {
      const s = await startStack(t)
      await seedNoise(s)
      const { ctx, hold } = await heldReader(t, s)
      const filter = by === 'q' ? { tags: [], q: TOKEN } : { tags: [TOKEN], q: null }
      // a wait long enough that a slow machine's publish and tail pull never outlast it (it answers as soon as
      // the held query is released with the signal in the tail)
      const q = { limit: 100, waitMs: 20_000, type: null, origin: null, sinceMs: null, includeExpired: false, refId: null, ...filter }
      const poll = ctx.readSide.feed.read({ ...q, cursor: variant.startsWith('no') ? null : 1 })
      await until(() => hold.held() === 1, 15_000, 'the page query to be held')

      const pub = (await s.publish({ $type: 'reply-wanted', $tags: [TOKEN], text: `answer for ${TOKEN}` })).json()
      await until(() => ctx.readSide.feed.head >= pub.cursor, 15_000, 'the reader to pull the new signal into its tail')
      hold.release()

      const page = await poll
      const ids = page.signals.map((j) => (JSON.parse(j) as { id: string }).id)
      t.same(ids, [pub.signal.id], 'the long-poll answers the signal that arrived during its query')
      t.ok(page.nextCursor >= pub.cursor, 'and its cursor moves past it only having delivered it')
    })
  }

t.test('a poll that times out answers from what the tail holds at its deadline', async (t) => {
  const s = await startStack(t)
  await seedNoise(s)
  const { ctx } = await heldReader(t, s)
  const head = ctx.readSide.feed.head
  const page = await ctx.readSide.feed.read({
    cursor: head,
    limit: 100,
    waitMs: 300,
    type: null,
    tags: [],
    origin: null,
    q: TOKEN,
    sinceMs: null,
    includeExpired: false,
    refId: null,
  })
  t.same(page.signals, [])
  t.equal(page.nextCursor, head, 'nothing new: the cursor stays where everything was considered')
  const later = (await s.publish({ $type: 'broadcast', text: TOKEN })).json()
  await until(() => ctx.readSide.feed.head >= later.cursor, 15_000, 'the reader to pull the later signal into its tail')
  const next = await ctx.readSide.feed.read({
    cursor: page.nextCursor,
    limit: 100,
    waitMs: 0,
    type: null,
    tags: [],
    origin: null,
    q: TOKEN,
    sinceMs: null,
    includeExpired: false,
    refId: null,
  })
  t.same(
    next.signals.map((j) => (JSON.parse(j) as { id: string }).id),
    [later.signal.id],
    'the follower sees the next match from that cursor',
  )
})

t.test('a follower that switches to a reader which has not heard of its cursor yet neither goes back nor skips', async (t) => {
  const s = await startStack(t)
  // a second reader that hears no wake-up at all (Redis at a closed port, no LISTEN, a 60 s fallback
  // poll): a follower's cursor from the first reader is news to it
  const cfg = loadConfig({
    DATABASE_URL: TEST_DATABASE_URL,
    WIRE_PG_SCHEMA: s.schema,
    WIRE_CONFIG: '/nonexistent/subwire.config.json',
    REDIS_URL: 'redis://127.0.0.1:1',
    WIRE_PG_NOTIFY: '0',
    WAKE_FALLBACK_POLL_MS: '60000',
    LOG_LEVEL: 'silent',
  })
  const deaf = await startReader(cfg, createLogger('reader', 'silent'))
  t.teardown(deaf.close)
  await deaf.app.ready()
  const start = (await s.read()).nextCursor as number
  const pubs = []
  for (let i = 0; i < 3; i++) pubs.push((await s.publish({ $type: 'broadcast', n: i })).json())
  const first = await s.read(`cursor=${start}&limit=2`) // the first reader serves two of three
  t.equal(first.nextCursor, pubs[1].cursor)
  t.ok(deaf.ctx.readSide.feed.head < first.nextCursor, 'the second reader has not loaded them: its tail is behind the cursor')
  const next = (await deaf.app.inject({ url: `/sw/signals?cursor=${first.nextCursor}&wait=2` })).json()
  t.ok(next.nextCursor >= first.nextCursor, `nextCursor never goes back (${first.nextCursor} → ${next.nextCursor})`)
  t.same(
    next.signals.map((x: { id: string }) => x.id),
    [pubs[2].signal.id],
    'and the third signal is delivered, once',
  )
})
