import t from 'tap'
import type { ReadQuery } from '../../libs/shared/domain/index.js'
import type { FeedPage } from '../../libs/shared/feed/page.js'
import { Waiters } from '../../libs/shared/feed/waiters.js'

// A wake-up of many waiters gives the event loop turns on its way (libs/shared/feed/waiters.ts): the
// followers it answered first poll again during them, and the tail may move meanwhile. None of them
// may skip a signal or get one twice. The turn is forced: more waiters than a wake-up answers
// between two turns, and the tail moves in the first turn.

const q: ReadQuery = Object.freeze({
  cursor: 0,
  limit: 100,
  waitMs: 25_000,
  type: null,
  tags: [],
  origin: null,
  q: null,
  sinceMs: null,
  includeExpired: false,
  refId: null,
})

/** A tail of signals numbered 1, 2, …: a page after `cursor` holds every later one. */
function tail() {
  const signals: string[] = []
  const check = (_q: ReadQuery, cursor: number): FeedPage => ({ signals: signals.slice(cursor), nextCursor: signals.length })
  return { signals, check }
}

/** The next turn of the event loop (what I/O that arrived meanwhile would get). */
const turn = () => new Promise<void>((r) => setImmediate(r))

/** A follower as the fast path holds it: the wait hands its page to a sink, and the answer is written a promise hop later. */
function poll(w: Waiters, cursor: number): Promise<FeedPage> {
  return new Promise<FeedPage>((page, fail) => w.add(q, cursor, 25_000, undefined, { page, fail }))
}

t.test('a wake-up that gives the loop turns: followers polling again meanwhile, while the tail moves, get every signal once', async (t) => {
  const w = new Waiters((_q, cursor, sink) => sink.page({ signals: [], nextCursor: cursor }))
  const { signals, check } = tail()
  const n = 1500
  const got: string[][] = Array.from({ length: n }, () => [])
  let firstAnswers = 0
  const follower = async (i: number) => {
    let cursor = 0
    while (cursor < 2) {
      const page = await poll(w, cursor)
      got[i]!.push(...page.signals)
      if (cursor === 0) firstAnswers++
      cursor = page.nextCursor
    }
  }
  const followers = Array.from({ length: n }, (_, i) => follower(i))
  signals.push('"s1"')
  let atFirstTurn = -1
  setImmediate(() => {
    atFirstTurn = firstAnswers
    signals.push('"s2"') // the tail moves while the wake-up is under way
  })
  await w.wake(check)
  t.ok(atFirstTurn > 0 && atFirstTurn < n, `the loop had a turn mid-way (${atFirstTurn} of ${n} answered by then)`)
  // the coalesced wake-up for s2 runs once this one is over (TailSync's `advanced`): every follower waits again by then
  while (w.size < n) await turn()
  await w.wake(check)
  await Promise.all(followers)
  const wrong = got.filter((g) => g.join() !== '"s1","s2"')
  t.equal(wrong.length, 0, `every follower got s1 then s2, once each${wrong.length ? ` (e.g. ${JSON.stringify(wrong[0])})` : ''}`)
  t.equal(w.size, 0)
})

t.test('waits end once, in any order, and a wake-up answers the ones left in the order they began', async (t) => {
  const ended: number[] = []
  const w = new Waiters((_q, cursor, sink) => sink.page({ signals: [], nextCursor: cursor }))
  const answered: number[] = []
  const leaving = Array.from({ length: 6 }, () => new AbortController())
  // cursor i marks waiter i (every waiter is in its own group: one page each)
  for (let i = 0; i < 6; i++)
    w.add(q, i, 25_000, leaving[i]!.signal, {
      page: (p) => (p.signals.length ? answered.push(i) : ended.push(i)),
      fail: () => t.fail('no failure'),
    })
  t.equal(w.size, 6)
  for (const i of [0, 3, 5, 3]) leaving[i]!.abort() // the first, one in the middle, the last, and one twice
  t.same(ended, [0, 3, 5], 'each client that left is answered once, from its cursor')
  t.equal(w.size, 3)
  w.add(q, 6, 25_000, undefined, { page: () => answered.push(6), fail: () => t.fail('no failure') })
  await w.wake((_q, cursor) => ({ signals: ['"s"'], nextCursor: cursor + 1 }))
  t.same(answered, [1, 2, 4, 6], 'the rest, oldest first, the one that began after the others left last')
  t.equal(w.size, 0)
  for (const c of leaving) c.abort() // after their answers: nothing more happens
  t.same(ended, [0, 3, 5])
  w.add(q, 7, 25_000, undefined, { page: () => ended.push(7), fail: () => t.fail('no failure') })
  w.releaseAll()
  t.same(ended, [0, 3, 5, 7], 'and the list takes new waits once emptied')
})
