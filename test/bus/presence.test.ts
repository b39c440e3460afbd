import t from 'tap'
import { localPresence, PRESENCE_WINDOW_MS } from '../../libs/shared/bus/index.js'
import { MAX_PENDING } from '../../libs/shared/bus/presence.js'

// The single process's recentPollers, with a clock of the test's.

t.test('counts distinct pollers of the last 60 s', async (t) => {
  let now = 1_000_000
  const p = localPresence(() => now)
  p.touch('a')
  p.touch('b')
  now += PRESENCE_WINDOW_MS / 2
  p.touch('a')
  t.equal(await p.count(), 2)
  now += PRESENCE_WINDOW_MS / 2
  t.equal(await p.count(), 1, 'b aged out; a was seen again')
  now += PRESENCE_WINDOW_MS
  t.equal(await p.count(), 0)
})

t.test('is bounded: beyond the cap new pollers are not remembered until old ones age out', async (t) => {
  const t0 = 1_000_000
  let now = t0
  const p = localPresence(() => now)
  for (let i = 0; i < MAX_PENDING + 10; i++) p.touch(`k${i}`)
  t.equal(await p.count(), MAX_PENDING, 'capped')
  now = t0 + 10
  p.touch('k0') // known: refreshed even at the cap
  now = t0 + PRESENCE_WINDOW_MS + 5
  t.equal(await p.count(), 1, 'only the refreshed poller is still recent')
  p.touch('late')
  t.equal(await p.count(), 2, 'and new pollers count again')
})
