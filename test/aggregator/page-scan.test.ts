import t from 'tap'
import { SIGNAL_TEXT_MAX_BYTES, ScannedPage, UNPARSED } from '../../apps/aggregator/search/page-scan.js'

// A followed page kept as its bytes: the signals are found in one pass and parsed one at a time,
// exactly as JSON.parse of the whole page would have them.

const bytes = (s: string) => new TextEncoder().encode(s)
const page = (s: string) => new ScannedPage(bytes(s))

t.test('each signal parses as JSON.parse of the page has it, whatever its strings hold', async (t) => {
  const signals = [
    { id: 'a', payload: { text: 'a "quoted" \\ backslash \\" and ] } [ { , : inside' }, tags: ['x', 'y'] },
    { id: 'b', payload: { n: [1, 2.5e3, -0, true, false, null], o: { deep: [[{}]] }, u: 'é ☃ 😀 \u0000 \n' } },
    'not an object',
    12,
    null,
  ]
  for (const text of [
    JSON.stringify({ signals, nextCursor: 42, serverNow: '2026-11-28T00:00:00.000Z' }),
    JSON.stringify({ serverNow: 'then', extra: { signals: [1] }, nextCursor: 7, signals }, null, 2),
    ` \n{ "nextCursor" : 9 , "signals" : [ ${signals.map((s) => JSON.stringify(s)).join(' ,\n ')} ] }\t`,
  ]) {
    const p = page(text)
    const whole = JSON.parse(text)
    t.same([...p.each()], whole.signals)
    t.equal(p.count, signals.length)
    t.equal(p.nextCursor, whole.nextCursor)
    t.equal(p.serverNow, whole.serverNow ?? '')
    t.same(p.signals, [], 'the page is read through each() only')
  }
  const empty = page('{"signals":[],"nextCursor":3,"serverNow":"x"}')
  t.same([...empty.each()], [])
  t.equal(empty.nextCursor, 3)
})

t.test('a page that is not JSON throws; a signal past the bound or not JSON is handed out unparsed', async (t) => {
  for (const text of ['', '[]', '{"signals":[1,2}', '{"signals":["abc]}', '{"signals":[]} trailing', '{"nextCursor":1,}', 'null'])
    t.throws(() => page(text), SyntaxError, `not a page: ${JSON.stringify(text)}`)
  const big = JSON.stringify({ id: 'big', payload: { text: 'z'.repeat(SIGNAL_TEXT_MAX_BYTES) } })
  const p = page(`{"signals":[{"id":"ok"},${big},{"id": tru},{"id":"last"}],"nextCursor":5}`)
  t.same(
    [...p.each()],
    [{ id: 'ok' }, UNPARSED, UNPARSED, { id: 'last' }],
    'the large one is not parsed, the broken one refused, the rest kept',
  )
  t.notOk(Number.isFinite(page('{"signals":[]}').nextCursor), 'no nextCursor: not a number the follower takes')
})

t.test("release() gives the page's bytes back at once", async (t) => {
  const b = bytes(JSON.stringify({ signals: [{ id: 'a' }], nextCursor: 1 }))
  const p = new ScannedPage(b)
  p.release()
  t.equal(b.buffer.byteLength, 0, 'the buffer is detached')
  t.same([...p.each()], [], 'and nothing is read from it after')
  p.release()
})
