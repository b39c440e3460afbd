import t from 'tap'
import type { Signal } from '../../libs/shared/domain/index.js'
import { entryBytes, Tail } from '../../libs/shared/feed/tail.js'
import { startStack } from '../helpers/stack.js'

// The tail is bounded in bytes as well as in entries: past READER_TAIL_MAX_BYTES the oldest
// signals leave it and `from` moves up (their readers go to the database), so large payloads can
// never make a reader's memory grow with the entry count alone.

const signal = (seq: number, payloadChars: number): Signal => ({
  seq,
  id: `s${String(seq).padStart(19, '0')}`,
  origin: 'fp_x',
  originName: null,
  originUri: 'sw://b/identities/fp_x',
  originVerified: true,
  type: 'broadcast',
  tags: [],
  payloadText: `{"text":"${'x'.repeat(payloadChars)}"}`,
  ttl: 60,
  pinned: false,
  refId: null,
  createdAtMs: 0,
  expiresAtMs: Number.MAX_SAFE_INTEGER,
})

t.test('past its byte bound the tail drops its oldest signals and moves from', async (t) => {
  const one = entryBytes(signal(1, 16_000))
  const tail = new Tail('b', 1000, 10 * one)
  tail.append(
    Array.from({ length: 25 }, (_, i) => signal(i + 1, 16_000)),
    25,
  )
  t.equal(tail.entries.length, 10, 'ten of them fit')
  t.equal(tail.from, 15, 'the fifteen oldest left')
  t.ok(tail.bytes <= 10 * one)
  t.notOk(tail.covers(14), 'a cursor below them goes to the database')
  t.ok(tail.covers(15))
  tail.append([signal(26, 10)], 26)
  t.same([tail.entries.length, tail.from], [10, 16], 'one more signal, however small, pushes the oldest out when the bound is full')
  tail.update(tail.entries[0]!.signal.id, null)
  t.equal(
    tail.bytes,
    tail.entries.reduce((n, e) => n + entryBytes(e.signal), 0),
    'bytes follow a removal',
  )
  tail.reset([signal(30, 16_000), signal(31, 16_000)], 31, 29)
  t.same([tail.entries.length, tail.bytes], [2, 2 * one], 'and a reset')
})

t.test('a board with a small byte bound still serves every signal, from the tail or the database', async (t) => {
  const s = await startStack(t, { env: { READER_TAIL_MAX_BYTES: String(1_048_576) } })
  const text = 'y'.repeat(15_000)
  const ids: string[] = []
  for (let i = 0; i < 40; i++) ids.push((await s.publish({ $type: 'broadcast', i, text })).json().signal.id)
  t.ok(s.reader.readSide.feed.head >= 40)
  const page = await s.read('cursor=0&limit=100')
  t.same(
    page.signals.map((x: { id: string }) => x.id),
    ids,
    'a read from before the tail: every signal, in order',
  )
})
