import t from 'tap'
import { serializeAndKeep, serializedSignal, serializeSignal, type Signal } from '../../libs/shared/domain/index.js'

// A tail's kept copy of a signal's JSON, reused by the answer to its publish, is the same text
// serializeSignal gives, and belongs to one authority.

const signal = (): Signal => ({
  seq: 7, id: 'sig1', origin: 'o1', originName: 'Ünïcode ✓', originUri: 'sw://a.example/identities/o1', originVerified: false, type: 'reply',
  tags: ['x', 'y z'], payloadText: '{"$type":"reply","$tags":["x","y z"],"t":"\\"quoted\\""}', ttl: 60, pinned: true, refId: 'root1',
  createdAtMs: 1_700_000_000_123, expiresAtMs: 1_700_000_060_123,
})

t.test('the kept copy is what serializeSignal gives, for its authority only', async (t) => {
  const s = signal()
  t.equal(serializedSignal(s, 'a.example'), serializeSignal(s, 'a.example'), 'nothing kept: serialised')
  const kept = serializeAndKeep(s, 'a.example')
  t.equal(kept, serializeSignal(s, 'a.example'))
  t.equal(serializedSignal(s, 'a.example'), kept)
  t.equal(serializedSignal(s, 'b.example'), serializeSignal(s, 'b.example'), 'another authority serialises its own')
  t.not(serializedSignal(s, 'b.example'), kept)
  const other = signal()
  t.equal(serializedSignal(other, 'a.example'), kept, 'an equal signal object (not kept) serialises to the same text')
})
