import t from 'tap'
import { verifyCache, type Verdict } from '../../libs/shared/auth/verify-cache.js'

// The verify cache on its own, with a clock of the test's: per-verdict TTL, the bound, single
// flight, and failures never cached.

const accepted = (value: string): Verdict<string> => ({ ok: true, value })
const rejected: Verdict<string> = { ok: false }

function clocked(maxEntries?: number) {
  let now = 1_000_000
  const cache = verifyCache<string>({ validMs: 30_000, rejectedMs: 5_000, now: () => now, ...(maxEntries && { maxEntries }) })
  return { cache, advance: (ms: number) => void (now += ms) }
}

t.test('an accepted verdict lives ~30 s, a rejected one ~5 s', async (t) => {
  const { cache, advance } = clocked()
  await cache.resolve('good', async () => accepted('id_a'))
  await cache.resolve('bad', async () => rejected)
  advance(4_999)
  t.same([cache.get('good'), cache.get('bad')], [accepted('id_a'), rejected], 'both fresh')
  advance(2)
  t.same([cache.get('good'), cache.get('bad')], [accepted('id_a'), undefined], 'the rejection aged out')
  advance(25_000)
  t.equal(cache.get('good'), undefined, 'the acceptance aged out')
})

t.test('concurrent lookups of one key share one load; a failure reaches them all and is not kept', async (t) => {
  const { cache } = clocked()
  let loads = 0
  let finish!: (v: Verdict<string>) => void
  const load = () => (loads++, new Promise<Verdict<string>>((r) => (finish = r)))
  const both = Promise.all([cache.resolve('k', load), cache.resolve('k', load)])
  t.ok(cache.pending('k'), 'in flight')
  t.notOk(cache.pending('other'))
  finish(accepted('id_k'))
  t.same(await both, [accepted('id_k'), accepted('id_k')])
  t.equal(loads, 1, 'one load')
  t.notOk(cache.pending('k'), 'settled')

  let fail!: (err: Error) => void
  const failing = () => (loads++, new Promise<Verdict<string>>((_, reject) => (fail = reject)))
  const waiting = [cache.resolve('f', failing), cache.resolve('f', failing)].map((p) =>
    p.then(
      () => 'ok',
      (e: Error) => e.message,
    ),
  )
  fail(new Error('network down'))
  t.same(await Promise.all(waiting), ['network down', 'network down'], 'every waiter got the failure')
  t.equal(cache.get('f'), undefined, 'nothing cached')
  t.same(await cache.resolve('f', async () => accepted('id_f')), accepted('id_f'), 'the next caller loads again')
  t.equal(loads, 2)
})

t.test('the cache is bounded: the least recently used key goes first', async (t) => {
  const { cache } = clocked(3)
  for (const k of ['a', 'b', 'c']) await cache.resolve(k, async () => accepted(k))
  cache.get('a') // a is now the most recent
  await cache.resolve('d', async () => accepted('d'))
  t.same(
    ['a', 'b', 'c', 'd'].map((k) => cache.get(k)?.ok ?? null),
    [true, null, true, true],
    'b was dropped',
  )
})
