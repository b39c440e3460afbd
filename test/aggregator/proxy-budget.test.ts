import { Readable, Writable } from 'node:stream'
import t from 'tap'
import { boardBudget } from '../../apps/aggregator/proxy-budget.js'
import { paced } from '../../apps/aggregator/proxy-pacing.js'
import { WireError } from '../../libs/shared/domain/index.js'
import { manualClock } from '../helpers/clock.js'
import { until } from '../helpers/wait.js'

// The proxy's byte budget per board (apps/aggregator/proxy-budget.ts) on a clock the test drives:
// every level, wait and count below is exact, whatever the machine's speed.

const RATE = 100_000 // bytes a second: a new bucket holds 1 s of it, a full one 4 s, 400,000 bytes

t.test('a bucket refills at its rate up to its burst, and goes below zero by what a board streamed past it', async (t) => {
  const clock = manualClock()
  const b = boardBudget({ bytesPerSecond: RATE, maxBoards: 10, clock })
  t.equal(b.burst, 400_000, 'a burst of 4 s')
  t.equal(b.level('a'), 100_000, "a board never charged would start with a second's worth")
  t.equal(b.size, 0, 'and holds no bucket')
  b.take('a', 50_000)
  t.equal(b.level('a'), 50_000)
  t.equal(b.waitMs('a'), 0, 'a bucket above zero may stream')
  b.take('a', 250_000)
  t.equal(b.level('a'), -200_000, 'one take may pass zero: the chunk was read already')
  t.equal(b.waitMs('a'), 2000, 'then it waits until the rate has paid the excess back')
  clock.advance(500)
  t.equal(b.level('a'), -150_000, 'refilled by 50,000 in half a second')
  t.equal(b.waitMs('a'), 1500)
  clock.advance(1500)
  t.equal(b.waitMs('a'), 0, 'at zero it may stream again')
  clock.advance(60_000)
  t.equal(b.level('a'), 400_000, 'an idle minute refills it to the burst, no further')
  t.equal(b.level('b'), 100_000, "another board's bucket is its own")
  t.same(b.counts, { bytes: 300_000, waitedMs: 0, waited: 0, refused: 0 })
})

t.test('a board over its budget is refused with 503 and a Retry-After of when it is back at zero', async (t) => {
  const clock = manualClock()
  const b = boardBudget({ bytesPerSecond: RATE, maxBoards: 10, clock })
  t.doesNotThrow(() => b.admit('a'), 'a full bucket admits')
  b.take('a', 250_000)
  const err = t.throws(() => b.admit('a')) as WireError
  t.ok(err instanceof WireError)
  t.equal(err.code, 'unavailable')
  t.equal(err.retryAfter, 2, '150,000 bytes over at 100,000 a second: 1.5 s, said as 2')
  t.equal(err.overload, true, 'logged as a refusal under load, not an error')
  t.match(err.message, /^a is over this aggregator's budget of 100000 bytes a second/)
  t.doesNotThrow(() => b.admit('b'), 'another board is admitted')
  t.equal(b.over(), 1, 'one board over its budget')
  clock.advance(1500)
  t.doesNotThrow(() => b.admit('a'), 'admitted again once paid back')
  t.equal(b.over(), 0)
  t.equal(b.counts.refused, 1)
})

t.test('buckets are bounded: at most maxBoards, the one charged longest ago goes, and a gone board drops its own', async (t) => {
  const clock = manualClock()
  const b = boardBudget({ bytesPerSecond: RATE, maxBoards: 3, clock })
  for (const board of ['a', 'b', 'c', 'd', 'e']) b.take(board, 1000)
  t.equal(b.size, 3, 'five boards charged, three buckets')
  t.equal(b.level('a'), 100_000, 'the first charged went: a new one would start again')
  t.equal(b.size, 3, 'reading a level makes no bucket')
  t.equal(b.level('e'), 99_000, 'the last charged is kept')
  b.take('c', 1000)
  b.take('f', 1000)
  t.equal(b.level('c'), 98_000, 'charged again, the oldest is the newest')
  t.equal(b.level('d'), 100_000, 'and the next oldest went in its place')
  b.drop('e')
  t.equal(b.size, 2, 'a removed board drops its bucket')
  t.equal(b.level('e'), 100_000)
  const off = boardBudget({ bytesPerSecond: 0, maxBoards: 3, clock })
  off.take('a', 1e9)
  t.equal(off.size, 0, 'off: no bucket')
  t.equal(off.waitMs('a'), 0, 'and no wait')
  t.doesNotThrow(() => off.admit('a'))
  const body = Readable.from([Buffer.alloc(10)])
  t.equal(off.meter(body, 'a', new AbortController().signal), body, 'off: an answer is read as it is, through nothing more')
})

/** A source of `chunks` chunks of `size` bytes, counting what was pulled from it. */
function source(chunks: number, size: number) {
  const s = { pulled: 0, stream: null as unknown as Readable }
  let left = chunks
  s.stream = new Readable({
    read() {
      if (left-- <= 0) return void this.push(null)
      s.pulled += size
      this.push(Buffer.alloc(size, 'x'))
    },
  })
  return s
}

/** A sink counting what reached it. */
function sink() {
  const s = { received: 0, ended: false, stream: null as unknown as Writable }
  s.stream = new Writable({
    write: (chunk: Buffer, _e, cb) => ((s.received += chunk.length), cb()),
    final: (cb) => ((s.ended = true), cb()),
  })
  return s
}

t.test(
  "an answer through its board's budget: what the bucket holds at once, then the rate, the board's socket not read meanwhile",
  async (t) => {
    const clock = manualClock()
    const b = boardBudget({ bytesPerSecond: RATE, maxBoards: 10, clock })
    const from = source(200, 10_000) // 2,000,000 bytes
    const to = sink()
    const out = paced(b, 'a', new AbortController().signal)
    from.stream.pipe(out).pipe(to.stream)
    await until(() => b.counts.waited === 1 && to.received === 110_000, 30_000, "a new bucket's second, and the chunk that passed zero")
    t.equal(b.level('a'), -10_000, 'the bucket is 10,000 below zero: the answer waits')
    // the clock stands still: nothing more may pass, and the source is read no further than the streams' own buffers
    for (let i = 0; i < 50; i++) await new Promise((r) => setImmediate(r))
    t.equal(to.received, 110_000, 'no byte more while the clock stands still')
    const buffers = from.stream.readableHighWaterMark + out.writableHighWaterMark + 10_000 // and the chunk waiting
    t.ok(
      from.pulled - to.received <= buffers,
      `the source was read ${from.pulled - to.received} bytes ahead (at most ${buffers}), not drained`,
    )
    clock.advance(1000)
    await until(() => to.received === 210_000 && b.waitMs('a') > 0, 30_000, 'one second of the rate')
    t.equal(b.counts.waitedMs, 1000, 'the answer waited the second the clock moved')
    clock.advance(60_000)
    await until(
      () => to.received === 620_000 && b.waitMs('a') > 0,
      30_000,
      'a full bucket after a long wait: the burst, not a minute of the rate',
    )
    t.equal(b.counts.waited, 1, 'one answer waited')
    while (!to.ended) {
      const before = to.received
      clock.advance(4000)
      await until(() => to.ended || (to.received > before && b.waitMs('a') > 0), 30_000, 'the next burst')
    }
    t.equal(to.received, 2_000_000, 'every byte, in order, once')
    t.equal(b.counts.bytes, 2_000_000, 'each charged once')
  },
)

t.test("the exchange's deadline ends an answer waiting for its budget", async (t) => {
  const clock = manualClock()
  const b = boardBudget({ bytesPerSecond: RATE, maxBoards: 10, clock })
  const from = source(100, 10_000)
  const ctl = new AbortController()
  const out = paced(b, 'a', ctl.signal)
  const to = sink()
  from.stream.pipe(out).pipe(to.stream)
  await until(() => b.counts.waited === 1 && to.received === 110_000, 30_000, 'the answer waits')
  clock.advance(250)
  const failed = new Promise<Error>((resolve) => out.once('error', resolve))
  ctl.abort(new DOMException('the deadline', 'TimeoutError'))
  t.equal((await failed).name, 'TimeoutError', "the answer ends with the signal's reason")
  t.ok(out.destroyed, 'its stream is destroyed (the proxy then destroys the board body)')
  t.equal(b.counts.waitedMs, 250, 'the time it waited is counted')
  const late = paced(b, 'a', ctl.signal)
  late.on('error', () => {}) // the proxy's pipeline takes it
  t.ok(late.destroyed, 'one made after the deadline ends at once')
})

t.test("one board's waiting answers share one queue, first come first served; one that ends leaves it", async (t) => {
  const clock = manualClock()
  const b = boardBudget({ bytesPerSecond: RATE, maxBoards: 10, clock })
  b.take('a', 110_000) // 10,000 below zero: every chunk waits
  const order: string[] = []
  const answer = (name: string) => {
    const from = source(5, 10_000)
    const to = sink()
    const out = paced(b, 'a', new AbortController().signal)
    out.on('data', () => order.push(name))
    out.on('error', () => {})
    from.stream.pipe(out)
    out.pipe(to.stream)
    return { out, to }
  }
  const first = answer('first')
  await until(() => b.counts.waited === 1, 30_000, 'the first answer waits')
  const second = answer('second')
  await until(() => b.counts.waited === 2, 30_000, 'the second waits behind it')
  clock.advance(350) // 25,000 above zero: a quarter second of the rate, when the queue is served
  await until(() => order.length === 3 && b.waitMs('a') > 0, 30_000, 'a quarter second of chunks')
  t.same(order, ['first', 'second', 'first'], 'in the order they queued, each chunk again at the back')
  second.out.destroy()
  clock.advance(1000)
  await until(() => first.to.ended, 30_000, 'the first answer ends')
  t.equal(first.to.received, 50_000, 'the first answer whole')
  t.equal(second.to.received, 10_000, 'the second left the queue with its one chunk')
  t.equal(b.level('a'), 65_000, 'each chunk passed charged once; none of the one that left')
})
