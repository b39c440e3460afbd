import t from 'tap'
import { hotCounts, metrics } from '../../libs/shared/metrics/index.js'
import { bodyOf, comparable, statusOf, type RawConnection } from '../helpers/raw-http.js'
import { until } from '../helpers/wait.js'
import { listening } from '../helpers/fast-path.js'

// The fast path serves POST /sw/signals below node's request objects and fastify when the head and a
// JSON body arrive whole (apps/writer/publish-fast-path.ts). Its answers are fastify's, byte for byte
// but the signal's own fields, and anything it does not take is fastify's, on the same connection.

const answered = (c: RawConnection, n: number) => until(() => c.answers.length >= n, 5000, `${n} answer(s)`)
const post = (body: string | Buffer, extra = '', type = 'application/json') =>
  Buffer.concat([
    Buffer.from(
      `POST /sw/signals HTTP/1.1\r\nHost: board.example\r\nOrigin: https://viewer.example\r\nContent-Type: ${type}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extra}\r\n`,
    ),
    Buffer.isBuffer(body) ? body : Buffer.from(body),
  ])
const auth = 'Authorization: Bearer fast-path-publisher-token\r\n'
const publishes = async (code: string) => (await metrics.publishes.get()).values.find((v) => v.labels.code === code)?.value ?? 0
/** An answer's head with its length blanked, and its body's signal with the fields that differ per signal blanked. */
const shape = (b: Buffer) => {
  const text = comparable(b)
  const body = bodyOf(b) as { signal?: Record<string, unknown>; cursor?: unknown }
  if (body.signal) for (const k of ['id', 'uri', 'createdAt', 'expiresAt']) body.signal[k] = '-'
  if (body.cursor !== undefined) body.cursor = '-'
  return { head: text.slice(0, text.indexOf('\r\n\r\n')).replace(/content-length: \d+/, 'content-length: -'), body }
}

t.test('what the fast path answers to a publish is what fastify answers: 200, 400, 401, counted alike', async (t) => {
  const { open, viaFastify } = await listening(t)
  const signal = JSON.stringify({ $type: 'broadcast', $tags: ['Fast'], text: 'né ✓' })
  const served0 = hotCounts.fastPathServed
  const ok0 = await publishes('200')
  const fast = open()
  const fastify = await viaFastify()
  const cases: Array<[string, Buffer, number]> = [
    ['a publish', post(signal, auth), 200],
    ['an envelope the domain refuses', post('{"text":"no type"}', auth), 400],
    ['no Authorization', post(signal), 401],
  ]
  for (const [i, [what, raw, status]] of cases.entries()) {
    fast.write(raw)
    fastify.write(raw)
    await answered(fast, i + 1)
    await answered(fastify, i + 1)
    t.equal(statusOf(fast.answers[i]!), status, `${what}: ${status}`)
    t.same(shape(fast.answers[i]!), shape(fastify.answers[i]!), `${what}: the same answer from both paths`)
  }
  t.match(bodyOf(fast.answers[0]!), { ok: true, signal: { type: 'broadcast', tags: ['fast'], payload: { text: 'né ✓' } } })
  t.match(fast.answers[2]!.toString(), /\r\nwww-authenticate: Bearer/, 'a 401 says how to authenticate')
  t.equal(hotCounts.fastPathServed - served0, 3, 'the fast path served the three')
  t.equal((await publishes('200')) - ok0, 2, 'both 200s counted in wire_publishes_total')
})

t.test('an Idempotency-Key and a traceparent go through the fast path: a retry answers the original signal', async (t) => {
  const { s, open } = await listening(t)
  const served0 = hotCounts.fastPathServed
  const c = open()
  const raw = post(
    '{"$type":"broadcast","text":"once"}',
    `${auth}Idempotency-Key: fast-key-1\r\ntraceparent: 00-${'a'.repeat(32)}-${'b'.repeat(16)}-01\r\n`,
  )
  c.write(raw)
  await answered(c, 1)
  c.write(raw)
  await answered(c, 2)
  t.equal(hotCounts.fastPathServed - served0, 2, 'both served by the fast path')
  t.same(
    c.answers.map((a) => bodyOf(a).signal.id),
    [bodyOf(c.answers[0]!).signal.id, bodyOf(c.answers[0]!).signal.id],
    'the retry answered the original signal',
  )
  const page = await s.read()
  t.equal(page.signals.filter((x: { payload: { text?: string } }) => x.payload.text === 'once').length, 1, 'stored once')
})

t.test("publishes the fast path does not take are fastify's, with the same answers as before", async (t) => {
  const { open } = await listening(t)
  const signal = '{"$type":"broadcast","text":"elsewhere"}'
  const cases: Array<[string, Buffer, number, string?]> = [
    ['a body that is not UTF-8', post(Buffer.from([0x7b, 0xff, 0x7d]), auth), 400, 'body is not valid UTF-8'],
    ['another Content-Type', post(signal, auth, 'text/plain'), 400, 'Content-Type must be application/json'],
    ['an empty body', post('', auth), 400, 'signal missing: send one JSON object'],
    [
      'a chunked body',
      Buffer.from(
        `POST /sw/signals HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n${auth}\r\n${signal.length.toString(16)}\r\n${signal}\r\n0\r\n\r\n`,
      ),
      200,
    ],
    ['a query', Buffer.from(post(signal, auth).toString().replace('/sw/signals', '/sw/signals?x=1')), 200],
    ['a body over 64 KiB', post(`{"$type":"broadcast","text":"${'x'.repeat(70_000)}"}`, auth), 413],
  ]
  for (const [what, raw, status, message] of cases) {
    const c = open()
    const handed0 = hotCounts.fastPathHandedOver
    c.write(raw)
    await until(() => c.answers.length === 1 || c.closed, 5000, what)
    t.equal(c.answers[0] && statusOf(c.answers[0]), status, `${what}: ${status} from fastify`)
    if (message) t.equal(bodyOf(c.answers[0]!).error.message, message)
    t.equal(hotCounts.fastPathHandedOver - handed0, 1, `${what}: handed over`)
  }

  // a body that arrives after its head is node's to assemble
  const split = open()
  const raw = post(signal, auth)
  split.write(raw.subarray(0, raw.length - 5))
  await new Promise((r) => setImmediate(r)) // a turn between the writes, so they leave as two packets (what is under test)
  split.write(raw.subarray(raw.length - 5))
  await answered(split, 1)
  t.equal(statusOf(split.answers[0]!), 200, 'a split body: published')
})

t.test('pipelined publishes are answered in order, one after the other', async (t) => {
  const { open } = await listening(t)
  const c = open()
  c.write(Buffer.concat([1, 2, 3].map((n) => post(`{"$type":"broadcast","n":${n}}`, auth))))
  await answered(c, 3)
  t.same(
    c.answers.map((a) => bodyOf(a).signal.payload.n),
    [1, 2, 3],
  )
})
