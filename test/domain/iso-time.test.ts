import t from 'tap'
import { isoFormatter } from '../../libs/shared/domain/iso-time.js'

// isoFormatter keeps the text of the last second it formatted: it must say what toISOString says
// for every time, in any order, and refuse what toISOString refuses.

const MAX = 8.64e15 // a Date's range, either side of 1970

t.test('says what toISOString says', async (t) => {
  const iso = isoFormatter()
  const times: number[] = [
    0,
    -0,
    1,
    999,
    1000,
    1001,
    -1,
    -999,
    -1000,
    -1001,
    MAX,
    -MAX,
    MAX - 1,
    -MAX + 1,
    1.9,
    -1.9,
    253402300799999,
    253402300800000,
  ]
  const now = Date.UTC(2026, 10, 29, 5, 0, 0)
  for (let i = 0; i < 2000; i++) times.push(now + i * 7) // one second after another
  for (let i = 0; i < 2000; i++) times.push(now + (i % 2) * 3_600_000 + i) // two seconds in turn
  for (let i = 0; i < 2000; i++) times.push(Math.round((Math.random() * 2 - 1) * MAX)) // anywhere
  let wrong = 0
  for (const ms of times) if (iso(ms) !== new Date(ms).toISOString()) wrong++, t.equal(iso(ms), new Date(ms).toISOString(), `${ms}`)
  t.equal(wrong, 0, `${times.length} times`)
})

t.test('refuses what toISOString refuses', async (t) => {
  const iso = isoFormatter()
  for (const ms of [Number.NaN, MAX + 1, -MAX - 1, Number.POSITIVE_INFINITY]) {
    t.throws(() => new Date(ms).toISOString(), RangeError)
    t.throws(() => iso(ms), RangeError, `${ms}`)
  }
  t.equal(iso(1000), '1970-01-01T00:00:01.000Z', 'and goes on after a refusal')
})
