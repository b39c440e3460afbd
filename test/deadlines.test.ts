import t from 'tap'
import { Deadlines, type Due } from '../libs/shared/deadlines.js'
import { manualClock } from './helpers/clock.js'

// The one timer behind long-poll deadlines, idle fast-path connections and first-request
// deadlines, on a clock the test drives: when an item fires is what is under test, so time moves
// only when the test says.

class Item implements Due {
  firedAt: number | null = null
  dueBucket: number | undefined = undefined
  onExpire: () => void = () => {}
  private readonly clock: { now(): number }
  constructor(clock: { now(): number }) {
    this.clock = clock
  }
  expire() {
    this.firedAt = this.clock.now()
    this.onExpire()
  }
}

t.test('each item fires once, not before its time and at most a tick after', async (t) => {
  const clock = manualClock()
  const d = new Deadlines<Item>(20, clock)
  const start = clock.now()
  const items = [150, 50, 100].map((ms) => {
    const it = new Item(clock)
    d.add(it, start + ms)
    return { it, at: start + ms }
  })
  t.equal(d.size, 3)
  clock.advance(49)
  t.ok(
    items.every(({ it }) => it.firedAt === null),
    'nothing before its time',
  )
  clock.advance(200)
  for (const { it, at } of items)
    t.ok(it.firedAt! >= at && it.firedAt! <= at + 20, `fired at +${it.firedAt! - start} ms for +${at - start} ms (tick 20 ms)`)
  t.equal(d.size, 0)
})

t.test('a cancelled item never fires; a second add moves it; an expiry may add another', async (t) => {
  const clock = manualClock()
  const d = new Deadlines<Item>(20, clock)
  const now = clock.now()
  const cancelled = new Item(clock)
  const moved = new Item(clock)
  const chained = new Item(clock)
  const last = new Item(clock)
  d.add(cancelled, now + 40)
  d.add(moved, now + 40)
  d.add(moved, now + 120)
  t.ok(d.cancel(cancelled), 'cancel says it had a deadline')
  t.notOk(d.cancel(cancelled), 'and only once')
  chained.onExpire = () => d.add(last, clock.now()) // due at once: lands in a later bucket, still fires
  d.add(chained, now + 60)
  clock.advance(100)
  t.equal(moved.firedAt, null, 'the moved item waits for its second time')
  t.not(last.firedAt, null, 'an item added by an expiry fired')
  clock.advance(100)
  t.ok(moved.firedAt! >= now + 120, 'the moved item fired at its second time')
  t.equal(cancelled.firedAt, null, 'the cancelled one did not fire')
  t.equal(d.size, 0)
})

t.test('cancelling an item of the bucket that is firing is harmless', async (t) => {
  const clock = manualClock()
  const d = new Deadlines<Item>(20, clock)
  const at = clock.now() + 30
  const a = new Item(clock)
  const b = new Item(clock)
  a.onExpire = () => void d.cancel(b)
  b.onExpire = () => void d.cancel(a)
  d.add(a, at)
  d.add(b, at)
  clock.advance(60)
  t.equal([a, b].filter((i) => i.firedAt !== null).length, 1, 'the first to fire cancelled the other')
  t.equal(d.size, 0)
})

t.test('the wheel stops ticking when nothing is due, and starts again', async (t) => {
  const clock = manualClock()
  const d = new Deadlines<Item>(20, clock)
  const one = new Item(clock)
  d.add(one, clock.now() + 20)
  clock.advance(40)
  t.not(one.firedAt, null)
  const two = new Item(clock)
  d.add(two, clock.now() + 1000)
  clock.advance(999)
  t.equal(two.firedAt, null)
  clock.advance(21)
  t.not(two.firedAt, null, 'fired within a tick of its time after an idle stretch')
})
