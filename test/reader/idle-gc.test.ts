import t, { type Test } from 'tap'
import { readFileSync } from 'node:fs'
import { lowMemoryCollect, startIdleGc, type IdleGcOptions } from '../../libs/shared/runtime/idle-gc.js'
import { mallocTrim } from '../../libs/shared/runtime/malloc-trim.js'
import { fleetSchema, startRole } from '../helpers/fleet.js'
import { TEST_DATABASE_URL } from '../helpers/services.js'

// IDLE_GC_INTERVAL_MS: a memory-reducing GC when a read side goes quiet after its RSS grew (V8's
// own memory reducer never starts on Node 24). The policy with its sources given; the collection
// itself in this process; and a real reader that makes one.

const MB = 2 ** 20

/**
 * A collector with its sources supplied: `p.cpu` (µs used), `p.rss` and `p.now` are the process the
 * policy sees, `p.collected` counts its collections; `tick(ms, cpuShare)` moves the clock by `ms`
 * with the process busy that share of a core, then looks once.
 */
function fakeProcess(t: Test, o: Partial<IdleGcOptions> = {}) {
  const p = { cpu: 0, rss: 100 * MB, now: 0, collected: 0 }
  const gc = startIdleGc({
    tickMs: 3_600_000,
    minIntervalMs: 10_000,
    ...o,
    cpuMicros: () => p.cpu,
    rssBytes: () => p.rss,
    now: () => p.now,
    collect: async () => void p.collected++,
  })
  t.teardown(() => gc.stop())
  const tick = (ms: number, cpuShare = 0) => ((p.now += ms), (p.cpu += ms * 1000 * cpuShare), gc.tick())
  return { p, gc, tick }
}

t.test(
  'collects once when the process goes quiet after its RSS grew; never while busy, twice within the interval, or without growth',
  async (t) => {
    const { p, gc, tick } = fakeProcess(t)
    p.rss = 200 * MB
    t.equal(await tick(1000, 0.5), false, 'grown, but busy (50 % of a core)')
    t.equal(await tick(1000, 0.01), true, 'grown and quiet: one collection')
    p.rss = 300 * MB
    t.equal(await tick(1000, 0), false, 'grown again, quiet, but within the interval')
    t.equal(await tick(10_000, 0), true, 'past the interval')
    t.equal(await tick(30_000, 0), false, 'no growth since the last collection (RSS read after it)')
    p.rss = 320 * MB
    t.equal(await tick(1000, 0), false, 'grown by less than a tenth')
    p.rss = 340 * MB
    t.equal(await tick(1000, 0), true, 'grown by more than a tenth')
    t.equal(p.collected, 3)
    t.equal(gc.stats.collections, 3)
  },
)

t.test(
  'over the RSS budget a quiet tick collects once the gap has passed, not the whole interval; still never while busy, within the gap or without growth',
  async (t) => {
    const { p, tick } = fakeProcess(t, { rssBudgetBytes: 200 * MB, overBudgetGapMs: 2000 })
    p.rss = 150 * MB
    t.equal(await tick(1000, 0), true, 'grown and quiet: the first collection')
    p.rss = 190 * MB
    t.equal(await tick(3000, 0), false, 'grown and quiet 3 s later, under the budget: waits for the interval')
    p.rss = 230 * MB
    t.equal(await tick(500, 0.5), false, 'over the budget, but busy')
    t.equal(await tick(500, 0.01), true, 'over the budget and quiet, 4 s after the last: collects')
    p.rss = 260 * MB
    t.equal(await tick(1000, 0), false, 'grown again and over the budget, but 1 s after the last (the gap is 2 s)')
    t.equal(await tick(1500, 0), true, 'past the gap')
    t.equal(await tick(3000, 0), false, 'over the budget without growth since the last collection: not again')
    t.equal(p.collected, 3)

    // the same process without a budget waits the whole interval
    const plain = fakeProcess(t, { rssBudgetBytes: 0 })
    plain.p.rss = 150 * MB
    t.equal(await plain.tick(1000), true)
    plain.p.rss = 300 * MB
    t.equal(await plain.tick(4000), false, 'no budget: 4 s after the last, far over 200 MB, it waits')
    t.equal(await plain.tick(6000), true, 'until the interval has passed')
  },
)

t.test('afterStart: the next quiet tick collects without growth, once; never while busy or within the interval', async (t) => {
  const { p, gc, tick } = fakeProcess(t) // RSS stays at 100 MB
  t.equal(await tick(1000, 0), false, 'no growth since it started: nothing to collect')
  gc.afterStart()
  t.equal(await tick(1000, 0.5), false, 'started, but busy')
  t.equal(await tick(1000, 0), true, 'started and quiet: one collection, though RSS did not grow')
  t.equal(await tick(30_000, 0), false, 'and only one')
  gc.afterStart()
  t.equal(await tick(1000, 0), true, 'again when asked again')
  gc.afterStart()
  t.equal(await tick(1000, 0), false, 'but never within the interval of the last one')
  t.equal(await tick(10_000, 0), true, 'past it')
  t.equal(p.collected, 3)
})

t.test('the collection gives the pages of a freed old generation back (a plain major GC keeps them pooled)', async (t) => {
  let keep: Array<{ i: number; s: string }> | null = Array.from({ length: 600_000 }, (_, i) => ({ i, s: `x${i}` }))
  await lowMemoryCollect() // what is kept is old now
  t.ok(keep.length > 0)
  keep = null
  const before = process.memoryUsage.rss()
  await lowMemoryCollect() // hangs if the session is closed inside V8's callback
  const after = process.memoryUsage.rss()
  t.ok(before - after > 16 * MB, `RSS ${Math.round(before / MB)} -> ${Math.round(after / MB)} MB`)
  await lowMemoryCollect()
  t.pass('and again')
})

/** Resident bytes of malloc's main heap (the brk heap), from /proc/self/smaps. */
function brkResident(): number {
  const m = /\[heap\]\n(?:.*\n)*?Rss:\s+(\d+) kB/.exec(readFileSync('/proc/self/smaps', 'utf8'))
  return Number(m?.[1] ?? 0) * 1024
}

t.test('the collection gives back malloc memory freed below blocks still alive (free() returns only the top of the heap)', async (t) => {
  t.ok(mallocTrim, 'the malloc_trim addon is built (dist/native/malloc-trim.node)')
  // 64 MB of Buffers from malloc's heap (16 KiB each: below its mmap threshold), every eighth kept
  let all: Buffer[] | null = Array.from({ length: 4096 }, () => Buffer.allocUnsafeSlow(16 * 1024).fill(1))
  const kept = all.filter((_, i) => i % 8 === 7)
  const before = brkResident()
  all = null // 56 MB freed by the collection, in holes between the kept ones
  await lowMemoryCollect()
  const after = brkResident()
  t.ok(before - after > 24 * MB, `malloc's heap resident ${Math.round(before / MB)} -> ${Math.round(after / MB)} MB`)
  t.equal(kept.length, 512)
})

const idleGcs = async (url: string) => Number(/^wire_idle_gc_total (\d+)/m.exec(await (await fetch(`${url}/metrics`)).text())?.[1])

t.test('a reader collects after its start (its RSS grew) once quiet; IDLE_GC_INTERVAL_MS=0 never does', async (t) => {
  const schema = fleetSchema(t)
  const env = { DATABASE_URL: TEST_DATABASE_URL, WIRE_PG_SCHEMA: schema, PUBLIC_WIRE_HOST: 'localhost:4000' }
  const writer = await startRole(t, 'writer', env) // migrates the schema
  const on = await startRole(t, 'reader', { ...env, IDLE_GC_INTERVAL_MS: '1000' })
  const off = await startRole(t, 'reader', { ...env, IDLE_GC_INTERVAL_MS: '0' })
  while (!((await idleGcs(on.url)) >= 1)) await new Promise((r) => setTimeout(r, 200))
  t.pass('the reader made a memory-reducing GC')
  t.equal(await idleGcs(off.url), 0, 'the one with IDLE_GC_INTERVAL_MS=0 made none')
  for (const r of [on, off, writer]) await r.stop()
})
