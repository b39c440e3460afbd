import t from 'tap'
import { Deadlines, type Due } from '../libs/shared/deadlines.js'
import { until } from './helpers/wait.js'

// The one timer behind long-poll deadlines and idle lane connections. Its deadlines are real time:
// when an item fires is what is under test, so these tests wait (on state) for real time to pass.

class Item implements Due {
  firedAt: number | null = null
  dueBucket: number | undefined = undefined
  onExpire: () => void = () => {}
  expire() {
    this.firedAt = Date.now()
    this.onExpire()
  }
}

t.test('each item fires once, not before its time and at most a tick or so after', async (t) => {
  const d = new Deadlines<Item>(20)
  const start = Date.now()
  const items = [150, 50, 100].map((ms) => {
    const it = new Item()
    d.add(it, start + ms)
    return { it, at: start + ms }
  })
  t.equal(d.size, 3)
  await until(() => items.every(({ it }) => it.firedAt !== null), 5000, 'all fired')
  for (const { it, at } of items) t.ok(it.firedAt! >= at - 20, `fired at +${it.firedAt! - start} ms for +${at - start} ms (tick 20 ms)`)
  t.equal(d.size, 0)
})

t.test('a cancelled item never fires; a second add moves it; an expiry may add another', async (t) => {
  const d = new Deadlines<Item>(20)
  const now = Date.now()
  const cancelled = new Item()
  const moved = new Item()
  const chained = new Item()
  const last = new Item()
  d.add(cancelled, now + 40)
  d.add(moved, now + 40)
  d.add(moved, now + 120)
  t.ok(d.cancel(cancelled), 'cancel says it had a deadline')
  t.notOk(d.cancel(cancelled), 'and only once')
  chained.onExpire = () => d.add(last, Date.now()) // due at once: lands in a later bucket, still fires
  d.add(chained, now + 60)
  await until(() => last.firedAt !== null && moved.firedAt !== null, 5000, 'the chain and the moved one fired')
  t.ok(moved.firedAt! >= now + 100, 'the moved item fired at its second time')
  t.equal(cancelled.firedAt, null, 'the cancelled one did not fire')
  t.equal(d.size, 0)
})

t.test('cancelling an item of the bucket that is firing is harmless', async (t) => {
  const d = new Deadlines<Item>(20)
  const at = Date.now() + 30
  const a = new Item()
  const b = new Item()
  a.onExpire = () => void d.cancel(b)
  b.onExpire = () => void d.cancel(a)
  d.add(a, at)
  d.add(b, at)
  await until(() => a.firedAt !== null || b.firedAt !== null, 5000, 'the bucket fired')
  t.equal([a, b].filter((i) => i.firedAt !== null).length, 1, 'the first to fire cancelled the other')
  t.equal(d.size, 0)
})
