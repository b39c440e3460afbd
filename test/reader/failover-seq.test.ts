import t from 'tap'
import { signalPartitions, statsWriter } from '../../libs/shared/db/index.js'
import { startStack, type Stack } from '../helpers/stack.js'
import { until } from '../helpers/wait.js'

// A promoted standby that never received the last acknowledged signals, forced on one database:
// the stack publishes, a follower reads everything (its cursor passes the signals about to be lost),
// then the feed is put in the state a standby promoted at that moment is in (the newest rows gone,
// feed_head back where the standby had it, on another timeline than the one its numbers were taken
// on), and the board publishes again. Before the jump the new signals took the lost seqs, at or
// below the follower's cursor, and it never saw them. The real thing, with a primary killed and a
// standby promoted, runs in test/fleet/failover.test.ts.

const ids = (page: { signals: Array<{ id: string }> }) => page.signals.map((s) => s.id)

async function loseNewest(s: Stack, kept: number) {
  await s.infra.primary.transaction(async (tx) => {
    // the standby's feed_head: its seq where replication stopped, numbered on the old timeline
    // (feed_head first, then signals: the order the writer takes them in)
    await tx.query(`update ${s.infra.schema}.feed_head set seq = $1, timeline = timeline - 1`, [kept])
    await tx.query(`delete from ${s.infra.schema}.signals where seq > $1`, [kept])
  })
}

t.test('a follower whose cursor passed lost signals receives every signal published after the failover', async (t) => {
  const s = await startStack(t)
  const before: string[] = []
  for (let i = 0; i < 10; i++) before.push((await s.publish({ $type: 'broadcast', i })).json().signal.id)
  const passed = await s.read('cursor=0&limit=100')
  t.same(ids(passed), before, 'the follower read all ten')
  const cursor = passed.nextCursor as number

  await loseNewest(s, 6) // the standby had replicated six of them
  const after: string[] = []
  const seqs: number[] = []
  for (let i = 0; i < 5; i++) {
    const ack = (await s.publish({ $type: 'broadcast', after: i })).json()
    after.push(ack.signal.id)
    seqs.push(ack.cursor)
  }

  const got: string[] = []
  let c = cursor
  for (let i = 0; i < 10 && got.length < after.length; i++) {
    const page = await s.read(`cursor=${c}&limit=2`) // small pages: the cursor crosses the jump on the way
    t.ok(page.nextCursor >= c, 'nextCursor never goes back')
    c = page.nextCursor
    got.push(...ids(page))
  }
  t.same(got, after, 'every signal published after the failover, once, in order')
  t.ok(seqs.length > 0 && seqs.every((q: number) => q > 2 ** 32), `the new primary numbers above the jump (${seqs[0]})`)

  const fresh = await s.read('limit=50')
  t.same(ids(fresh), [...before.slice(0, 6), ...after], 'a new follower sees what the board holds: no lost signal, nothing new missing')
  const head = await s.infra.primary.query<{ seq: string; failover_seq: string }>(
    `select seq, failover_seq from ${s.infra.schema}.feed_head`,
  )
  t.equal(Number(head.rows[0]!.failover_seq), 2 * 2 ** 32, 'the failover point is recorded')

  // the stretch the jump left unused costs the sweeper nothing: partitions are made above the head,
  // and the stats rollup crosses it in one step
  const parts = signalPartitions(s.infra.primary, s.infra.schema)
  await parts.ensure()
  const top = Number(head.rows[0]!.seq)
  t.ok(
    (await parts.list()).some((p) => (p.lo ?? 0) <= top + 1 && top + 1 < p.hi),
    'a partition takes the next signal above the jump',
  )
  const rolled = await statsWriter(s.infra.primary, s.infra.schema).rollUp(1000)
  t.match(
    rolled,
    { caughtUp: true, lastSeq: top, counted: 11 },
    'the stats rollup counts the eleven stored signals and reaches the head in one step',
  )
})

t.test('a long-poll waiting inside the lost stretch wakes for the first signal after the failover', async (t) => {
  const s = await startStack(t)
  for (let i = 0; i < 8; i++) await s.publish({ $type: 'broadcast', i })
  const cursor = (await s.read('cursor=0&limit=100')).nextCursor as number
  await loseNewest(s, 3)
  const waiting = s.read(`cursor=${cursor}&wait=10`)
  const fresh = (await s.publish({ $type: 'broadcast', text: 'first after the failover' })).json().signal.id
  const page = await waiting
  t.same(ids(page), [fresh], 'the long-poll is answered with the new signal')
  await until(async () => (await s.read(`cursor=0&limit=100`)).signals.length === 4, 5000, 'the tail to drop the lost signals')
  t.pass('the tail no longer serves the signals the promoted board does not hold')
})
