import type net from 'node:net'
import t from 'tap'
import { parseReadQuery } from '../../libs/shared/domain/index.js'
import { SharedPages } from '../../libs/shared/feed/shared-pages.js'
import { tailPage } from '../../libs/shared/feed/tail-pages.js'
import { Tail } from '../../libs/shared/feed/tail.js'
import { rawConnection as connection } from '../helpers/raw-http.js'
import { startStack } from '../helpers/stack.js'
import { until } from '../helpers/wait.js'

// Followers who poll again after the tail moved find the next signals in the tail: every read of the
// same query and cursor gets one shared page (encoded once), and never one the tail no longer says.

const T0 = Date.UTC(2026, 10, 24, 12, 0, 0, 100) // 100 ms into a second
const signal = (seq: number, o: { type?: string; expiresAtMs?: number; pinned?: boolean } = {}) => ({
  seq,
  id: `id${seq}`,
  origin: 'fp_x',
  originUri: 'sw://test/identities/x',
  originName: null,
  originVerified: true,
  type: o.type ?? 'note',
  tags: [],
  payloadText: JSON.stringify({ n: seq }),
  refId: null,
  ttl: 600,
  createdAtMs: T0,
  expiresAtMs: o.expiresAtMs ?? T0 + 600_000,
  pinned: o.pinned ?? false,
})
const query = (raw: Record<string, string> = {}) => parseReadQuery({ cursor: '0', ...raw }, T0, 'test')
const seqs = (p: { signals: string[] } | null) => p?.signals.map((j) => JSON.parse(j).payload.n)

t.test('one page per query and cursor while the tail stays as it is; a new one when it moves', async (t) => {
  const tail = new Tail('test', 100)
  tail.reset([signal(1), signal(2), signal(3, { type: 'other' })] as never, 3, 0)
  const pages = new SharedPages()
  const q = query()
  const a = pages.page(tail, q, 1, T0, 0)
  t.same(seqs(a), [2, 3])
  t.equal(pages.page(tail, query(), 1, T0 + 5, 0), a, 'the same query text parsed again, same cursor: the same page object')
  t.same(seqs(pages.page(tail, q, 0, T0, 0)), [1, 2, 3], 'another cursor: its own page')
  t.same(seqs(pages.page(tail, query({ type: 'other' }), 1, T0, 0)), [3], 'another filter: its own page')
  t.same(seqs(pages.page(tail, query({ limit: '1' }), 1, T0, 0)), [2], 'another limit: its own page')
  t.same(pages.page(tail, q, 3, T0, 0), { signals: [], nextCursor: 3 }, 'at the head: nothing')

  tail.append([signal(4)] as never, 4)
  const b = pages.page(tail, q, 1, T0 + 10, 0)
  t.not(b, a, 'the tail moved: a fresh page')
  t.same(seqs(b), [2, 3, 4])
  t.equal(b!.nextCursor, 4)
  tail.append([] as never, 4)
  t.equal(pages.page(tail, q, 1, T0 + 10, 0), b, 'a refresh that found nothing keeps it')

  tail.update('id3', { ...signal(3, { type: 'other' }), pinned: true } as never)
  const pinned = pages.page(tail, q, 1, T0 + 10, 0)
  t.not(pinned, b, 'a pin: a fresh page')
  t.match(JSON.parse(pinned!.signals[1]!), { pinned: true })
  tail.update('id2', null)
  t.same(seqs(pages.page(tail, q, 1, T0 + 10, 0)), [3, 4], 'a removal: gone from the next page')
})

t.test('a kept page lapses when a signal in it expires, and at the end of its second', async (t) => {
  const tail = new Tail('test', 100)
  tail.reset([signal(1), signal(2, { expiresAtMs: T0 + 300 }), signal(3, { expiresAtMs: T0 + 200, pinned: true })] as never, 3, 0)
  const pages = new SharedPages()
  const q = query()
  const a = pages.page(tail, q, 0, T0, 0)
  t.same(seqs(a), [1, 2, 3])
  t.equal(pages.page(tail, q, 0, T0 + 299, 0), a, 'before the expiry (a pinned signal does not expire)')
  const b = pages.page(tail, q, 0, T0 + 300, 0)
  t.same(seqs(b), [1, 3], 'at the expiry: what tailPage says now')
  t.same(b, tailPage(tail, q, 0, T0 + 300, 0))
  t.equal(pages.page(tail, q, 0, T0 + 899, 0), b, 'within its second')
  t.not(pages.page(tail, q, 0, T0 + 900, 0), b, 'the next second: made again (its serverNow)')

  const since = parseReadQuery({ cursor: '0', since: '5m' }, T0, 'test')
  t.not(pages.page(tail, since, 0, T0 + 900, 0), pages.page(tail, since, 0, T0 + 900, 0), 'a query relative to now is never kept')
})

t.test('bounded: past 256 pages every kept one goes', async (t) => {
  const tail = new Tail('test', 1000)
  tail.reset(Array.from({ length: 400 }, (_, i) => signal(i + 1)) as never, 400, 0)
  const pages = new SharedPages()
  const q = query({ limit: '1' })
  const first = pages.page(tail, q, 0, T0, 0)
  for (let c = 1; c < 256; c++) pages.page(tail, q, c, T0, 0)
  t.equal(pages.page(tail, q, 0, T0, 0), first, '256 kept')
  pages.page(tail, q, 300, T0, 0)
  const again = pages.page(tail, q, 0, T0, 0)
  t.not(again, first, 'the 257th emptied them')
  t.same(again, first)
})

t.test('followers who come back after the tail moved get the shared bytes, and every signal once', async (t) => {
  const s = await startStack(t, { overrides: { fallbackPollMs: 60_000 } })
  await s.app.listen({ port: 0, host: '127.0.0.1' })
  const port = (s.app.server.address() as net.AddressInfo).port
  const cursor = (await s.read()).nextCursor as number
  t.equal((await s.publish({ $type: 'broadcast', text: 'one' })).statusCode, 200)
  t.equal((await s.publish({ $type: 'broadcast', text: 'two' })).statusCode, 200)
  await until(async () => (await s.read()).nextCursor === cursor + 2, 5000, 'the tail holds both')
  // three followers at the cursor the last wake-up left them at, each polling again now
  const conns = Array.from({ length: 3 }, () => connection(port))
  t.teardown(() => conns.forEach((c) => void c.end()))
  for (const c of conns) c.get(`/sw/signals?cursor=${cursor}&wait=20`)
  await until(() => conns.every((c) => c.answers.length === 1), 5000, 'three answers')
  const bodies = conns.map((c) => c.answers[0]!.toString('latin1').split('\r\n\r\n')[1]!)
  // one encoding: the same body, serverNow included (unless the answers straddle a second: a kept page lapses with its second)
  const second = (b: string) => JSON.parse(b).serverNow.slice(0, 19)
  for (const b of bodies.slice(1)) t.ok(b === bodies[0] || second(b) !== second(bodies[0]!), 'the same body within a second')
  const page = JSON.parse(bodies[0]!)
  t.same(
    page.signals.map((x: any) => x.payload.text),
    ['one', 'two'],
  )
  t.equal(page.nextCursor, cursor + 2)

  // the tail moves: the same cursor now gets a page with the new signal, the next cursor only that one
  t.equal((await s.publish({ $type: 'broadcast', text: 'three' })).statusCode, 200)
  await until(async () => (await s.read()).nextCursor === cursor + 3, 5000, 'the tail holds three')
  conns[0]!.get(`/sw/signals?cursor=${cursor}&wait=20`)
  conns[1]!.get(`/sw/signals?cursor=${cursor + 2}&wait=20`)
  await until(() => conns[0]!.answers.length === 2 && conns[1]!.answers.length === 2, 5000, 'second answers')
  const texts = (c: (typeof conns)[number]) =>
    JSON.parse(c.answers[1]!.toString('latin1').split('\r\n\r\n')[1]!).signals.map((x: any) => x.payload.text)
  t.same(texts(conns[0]!), ['one', 'two', 'three'])
  t.same(texts(conns[1]!), ['three'])
})
