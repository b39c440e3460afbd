import t from 'tap'
import { ident, signalWriter } from '../../libs/shared/db/index.js'
import { migratedSchema, newSignal } from '../helpers/signal-db.js'

// The batch insert answers the new head alone and the writer numbers the batch from it
// (db/signals/write.ts): each signal it hands back must carry the seq its row was stored with, in the
// batch's order, with its tag rows under that seq.

const signal = (id: string, tags: string[]) => newSignal(id, tags)

t.test('a batch comes back numbered as it was stored, in order, its tag rows under the same seqs', async (t) => {
  const { db, schema } = await migratedSchema(t, 'batch')
  const writer = signalWriter(db, ident(schema))

  const stored = async () =>
    (
      await db.query<{ seq: string; id: string; tags: string[] }>(`select seq, id, tags from ${ident(schema)}.signals order by seq`)
    ).rows.map((r) => [Number(r.seq), r.id])
  const tagRows = async () =>
    (await db.query<{ tag: string; seq: string }>(`select tag, seq from ${ident(schema)}.signal_tags order by seq, tag`)).rows.map((r) => [
      Number(r.seq),
      r.tag,
    ])

  const first = await writer.insertBatch([
    signal('AAAAAAAAAAAAAAAAAAA1', ['x']),
    signal('AAAAAAAAAAAAAAAAAAA2', []),
    signal('AAAAAAAAAAAAAAAAAAA3', ['y', 'z']),
  ])
  const second = await writer.insertBatch([signal('AAAAAAAAAAAAAAAAAAA4', ['x']), signal('AAAAAAAAAAAAAAAAAAA5', ['z'])])
  const all = [...first, ...second]
  t.same(
    all.map((s) => s.id),
    ['AAAAAAAAAAAAAAAAAAA1', 'AAAAAAAAAAAAAAAAAAA2', 'AAAAAAAAAAAAAAAAAAA3', 'AAAAAAAAAAAAAAAAAAA4', 'AAAAAAAAAAAAAAAAAAA5'],
    'in the order given',
  )
  t.same(
    all.map((s) => s.seq),
    [1, 2, 3, 4, 5],
    'consecutive from the head, batch after batch',
  )
  t.same(
    await stored(),
    all.map((s) => [s.seq, s.id]),
    'each seq is the one its row was stored with',
  )
  t.same(
    await tagRows(),
    [
      [1, 'x'],
      [3, 'y'],
      [3, 'z'],
      [4, 'x'],
      [5, 'z'],
    ],
    'the tag rows were written under the same seqs',
  )
  t.ok(
    all.every((s) => s.pinned === false),
    'not pinned',
  )
})

t.test('a payload is stored as its exact text: white space, key order, escapes and numbers as sent', async (t) => {
  const { db, schema } = await migratedSchema(t, 'batchpayload')
  const writer = signalWriter(db, ident(schema))
  // the batch carries each payload as JSON in a json column (write.ts), not as an escaped string
  const payloads = [
    '{"$type":"broadcast","$tags":[],"b" : 1 ,\n\t"a":{"z":1.50,"y":[ 1,2 ]},"2":"two"}',
    '{"$type":"broadcast","$tags":[],"s":"quote \\" backslash \\\\ slash \\/ \\u00e9 é \\ud83d\\ude00 😀 \u2028 \\n","n":12345678901234567890,"e":-0.0e+00}',
    '{"$type":"broadcast","$tags":[],"deep":[[[[{"a":[{}]}]]]],"null":null,"t":true,"f":false}',
  ]
  const saved = await writer.insertBatch(payloads.map((p, i) => ({ ...signal(`AAAAAAAAAAAAAAAAAAP${i}`, []), payloadText: p })))
  const rows = (await db.query<{ payload: string }>(`select payload from ${ident(schema)}.signals order by seq`)).rows
  t.same(
    rows.map((r) => r.payload),
    payloads,
    'each row holds the payload byte for byte',
  )
  t.same(
    saved.map((s) => s.payloadText),
    payloads,
    'and the signals handed back carry it unchanged',
  )
})
