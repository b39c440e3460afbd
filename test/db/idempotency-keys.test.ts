import t from 'tap'
import { idempotencyKeys, signalWriter } from '../../libs/shared/db/index.js'
import { groupedFind } from '../../libs/shared/publish/index.js'
import { migratedSchema, newSignal } from '../helpers/signal-db.js'

// Idempotency-Keys at the database (db/signals/write.ts insertKeyedBatch, db/signals/idempotency.ts
// findMany): a batch stores each new key with its signal and nothing for a key already held; the
// lookups of concurrent publishes go in one statement and answer each pair as find() would.

const signal = (id: string) => newSignal(id, ['k'])

t.test('Idempotency-Keys at the database', async (t) => {
  const { db, s } = await migratedSchema(t, 'keys', 3)
  const writer = signalWriter(db, s)
  const keys = idempotencyKeys(db, s)
  const stored = async () => (await db.query<{ id: string }>(`select id from ${s}.signals order by seq`)).rows.map((r) => r.id)
  const keyRows = async () =>
    (await db.query<{ key: string; signal_id: string }>(`select key, signal_id from ${s}.idempotency_keys order by key`)).rows.map((r) => [
      r.key,
      r.signal_id,
    ])

  t.test('a batch stores each new key with its signal, and nothing for a key already held or repeated', async (t) => {
    await db.query(
      `insert into ${s}.idempotency_keys (identity, key, signal_id) values ('fp_0123456789abcdef0123', 'held', 'ELSEWHERE00000000000')`,
    )
    const batch = ['KEYA0000000000000001', 'KEYB0000000000000002', 'KEYC0000000000000003', 'KEYD0000000000000004', 'KEYE0000000000000005']
    const out = await writer.insertKeyedBatch(
      batch.map((id) => signal(id)),
      ['new-1', null, 'held', 'new-1', 'new-2'],
    )
    t.same(
      out.map((x) => x?.id ?? null),
      ['KEYA0000000000000001', 'KEYB0000000000000002', null, null, 'KEYE0000000000000005'],
      'the key already held and the key repeated in the batch store nothing',
    )
    const seqs = out.map((x) => x?.seq ?? null)
    t.equal(seqs[1]! - seqs[0]!, 1)
    t.equal(seqs[4]! - seqs[0]!, 4, 'the signals keep the seqs of their places: the places left out stay unused')
    t.same(await stored(), ['KEYA0000000000000001', 'KEYB0000000000000002', 'KEYE0000000000000005'])
    t.same(await keyRows(), [
      ['held', 'ELSEWHERE00000000000'],
      ['new-1', 'KEYA0000000000000001'],
      ['new-2', 'KEYE0000000000000005'],
    ])
    const head = (await db.query<{ seq: string }>(`select seq from ${s}.feed_head`)).rows[0]!.seq
    t.equal(Number(head), seqs[4], 'the head is the batch’s last place')
    const next = await writer.insertBatch([signal('NEXT0000000000000006')])
    t.equal(next[0]!.seq, seqs[4]! + 1, 'the next batch follows it')
  })

  t.test('a batch whose every key is held stores nothing and moves the head', async (t) => {
    const before = await stored()
    const out = await writer.insertKeyedBatch([signal('NONE0000000000000007')], ['new-1'])
    t.same(out, [null])
    t.same(await stored(), before)
  })

  t.test('findMany answers each pair as find does, in order, in one statement', async (t) => {
    const odd = 'key "quoted" \\ back\u0001'
    await db.query(`insert into ${s}.idempotency_keys (identity, key, signal_id) values ('id:with"quote', $1, 'ODD00000000000000000')`, [
      odd,
    ])
    await db.query(
      `insert into ${s}.idempotency_keys (identity, key, signal_id, created_at) values ('fp_0123456789abcdef0123', 'dead', 'DEAD0000000000000000', now() - interval '25 hours')`,
    )
    const pairs: Array<[string, string]> = [
      ['fp_0123456789abcdef0123', 'new-2'],
      ['fp_0123456789abcdef0123', 'absent'],
      ['id:with"quote', odd],
      ['fp_0123456789abcdef0123', 'dead'],
      ['another-identity', 'new-1'],
      ['fp_0123456789abcdef0123', 'new-2'],
    ]
    const many = await keys.findMany(pairs)
    const one = await Promise.all(pairs.map(([i, k]) => keys.find(i, k)))
    t.same(
      many.map((r) => r?.signalId ?? null),
      ['KEYE0000000000000005', null, 'ODD00000000000000000', null, null, 'KEYE0000000000000005'],
    )
    t.same(
      many.map((r) => r?.signalId ?? null),
      one.map((r) => r?.signalId ?? null),
      'as find() answers them one by one',
    )
    t.ok(
      many.every((r) => r === null || (r.ageMs >= 0 && r.ageMs < 60_000)),
      'with their ages',
    )
    t.same(await keys.findMany([]), [])
  })

  t.test('groupedFind: the lookups of one turn go in one statement', async (t) => {
    // the real findMany, counted
    let calls = 0
    const counted = { ...keys, findMany: (pairs: Parameters<typeof keys.findMany>[0]) => (calls++, keys.findMany(pairs)) }
    const find = groupedFind(counted)
    const found = await Promise.all([
      find('fp_0123456789abcdef0123', 'new-1'),
      find('fp_0123456789abcdef0123', 'absent'),
      find('fp_0123456789abcdef0123', 'new-2'),
    ])
    t.same(
      found.map((r) => r?.signalId ?? null),
      ['KEYA0000000000000001', null, 'KEYE0000000000000005'],
    )
    t.equal(calls, 1, 'three lookups, one statement')
    const later = await find('fp_0123456789abcdef0123', 'new-2')
    t.equal(later?.signalId, 'KEYE0000000000000005')
    t.equal(calls, 2, 'a lookup of a later turn, the next')
    // the table gone for a moment: a real statement that fails
    await db.query(`alter table ${s}.idempotency_keys rename to idempotency_keys_away`)
    try {
      const failed = await Promise.allSettled([find('a', 'b'), find('c', 'd')])
      t.same(
        failed.map((r) => r.status),
        ['rejected', 'rejected'],
        'a statement that fails rejects every lookup it carried',
      )
    } finally {
      await db.query(`alter table ${s}.idempotency_keys_away rename to idempotency_keys`)
    }
    t.equal((await find('fp_0123456789abcdef0123', 'new-1'))?.signalId, 'KEYA0000000000000001', 'and the next lookup is answered')
  })
})
