import t from 'tap'
import { purgeExpired } from '../../apps/sweeper/jobs/purge-expired.js'
import { signalPurger } from '../../libs/shared/db/index.js'
import { createLogger } from '../../libs/shared/log/index.js'
import { startStack, type Stack } from '../helpers/stack.js'
import { secondWriter } from './more-roles.js'

// Safe retries: a publish retried with the same Idempotency-Key and identity answers the original
// signal instead of storing another, on any writer, however many retries race.

type App = Stack['app']
const send = (app: App, s: Stack, key: string | undefined, body: unknown, token = 'idem-agent-token') =>
  app.inject({
    method: 'POST',
    url: '/sw/signals',
    headers: { ...s.bearer(token), ...(key !== undefined && { 'idempotency-key': key }) },
    payload: body as object,
  })
const count = async (s: Stack) =>
  (await s.infra.primary.query<{ n: number }>(`select count(*)::int as n from "${s.schema}".signals`)).rows[0]!.n

t.test('Idempotency-Key', async (t) => {
  const s = await startStack(t)

  t.test('a retry answers the original signal, and stores nothing new', async (t) => {
    const first = await send(s.app, s, 'order-1', { $type: 'broadcast', n: 1 })
    t.equal(first.statusCode, 200)
    const again = await send(s.app, s, 'order-1', { $type: 'broadcast', n: 1 })
    t.equal(again.statusCode, 200)
    t.same(again.json(), first.json(), 'the same answer, byte for byte')
    const n = await count(s)
    const third = await send(s.app, s, 'order-1', { $type: 'broadcast', n: 'changed' })
    t.equal(third.json().signal.id, first.json().signal.id, 'the original, whatever the retry carries')
    t.equal(await count(s), n)
  })

  t.test('keys are per identity; a new key is a new signal', async (t) => {
    const mine = await send(s.app, s, 'shared-key', { $type: 'broadcast' }, 'identity-a-token')
    const theirs = await send(s.app, s, 'shared-key', { $type: 'broadcast' }, 'identity-b-token')
    t.not(mine.json().signal.id, theirs.json().signal.id)
    const other = await send(s.app, s, 'another-key', { $type: 'broadcast' }, 'identity-a-token')
    t.not(other.json().signal.id, mine.json().signal.id)
  })

  t.test('a publish that failed frees its key: the retry publishes', async (t) => {
    const bad = await send(s.app, s, 'fix-and-retry', { $type: '' })
    t.equal(bad.statusCode, 400)
    const good = await send(s.app, s, 'fix-and-retry', { $type: 'broadcast' })
    t.equal(good.statusCode, 200)
  })

  t.test('an invalid key is invalid_request', async (t) => {
    for (const key of ['', 'x'.repeat(256), 'has space', 'tab\tkey', 'é-key']) {
      const res = await s.app.inject({
        method: 'POST',
        url: '/sw/signals',
        headers: { ...s.bearer(), 'content-type': 'application/json', 'idempotency-key': Buffer.from(key, 'utf8').toString('latin1') },
        payload: '{"$type":"broadcast"}',
      })
      t.equal(res.statusCode, 400, JSON.stringify(key.slice(0, 12)))
      t.equal(res.json().error.code, 'invalid_request')
    }
    t.equal((await send(s.app, s, 'k'.repeat(255), { $type: 'broadcast' })).statusCode, 200, '255 characters is fine')
    const anonymous = await s.app.inject({
      method: 'POST',
      url: '/sw/signals',
      headers: { 'idempotency-key': 'has space' },
      payload: { $type: 'broadcast' },
    })
    t.equal(anonymous.statusCode, 401, 'auth is checked before the key')
  })

  t.test('concurrent retries of one key on two writers store one signal', async (t) => {
    const other = await secondWriter(t, s)
    for (let round = 0; round < 5; round++) {
      const before = await count(s)
      const key = `race-${round}`
      const res = await Promise.all(Array.from({ length: 8 }, (_, i) => send(i % 2 ? other : s.app, s, key, { $type: 'broadcast', round })))
      t.same(
        res.map((r) => r.statusCode),
        Array(8).fill(200),
        'every retry is answered 200',
      )
      t.equal(new Set(res.map((r) => r.json().signal.id)).size, 1, 'all with the same signal')
      t.equal(await count(s), before + 1, 'and one row stored')
    }
  })

  t.test('a new key is stored with its signal, in the statement that stores the signal', async (t) => {
    const keyRows = async () => (await s.infra.primary.query(`select 1 from "${s.schema}".idempotency_keys`)).rowCount
    // a signal the database refuses (a check added for this test, a real constraint error): nothing
    // is stored, neither the signal nor its key, so the retry publishes
    const check = `alter table "${s.schema}".signals add constraint refuse_poison check (payload not like '%poison%')`
    await s.infra.primary.query(check)
    const [n, keys] = [await count(s), await keyRows()]
    const refused = await send(s.app, s, 'atomic-1', { $type: 'broadcast', text: 'poison' })
    t.equal(refused.statusCode, 500, 'the database refused it')
    t.equal(refused.json().error.details.outcome, 'not_stored')
    t.equal(await count(s), n, 'no signal')
    t.equal(await keyRows(), keys, 'and no key')
    await s.infra.primary.query(`alter table "${s.schema}".signals drop constraint refuse_poison`)
    const retried = await send(s.app, s, 'atomic-1', { $type: 'broadcast', text: 'poison' })
    t.equal(retried.statusCode, 200, 'the retry publishes')
    const row = await s.infra.primary.query<{ signal_id: string }>(
      `select signal_id from "${s.schema}".idempotency_keys where key = 'atomic-1'`,
    )
    t.equal(row.rows[0]?.signal_id, retried.json().signal.id, 'the key points at its signal')
  })

  t.test('retries of one key in one batch store one signal, and a follower misses nothing across the seqs left unused', async (t) => {
    const page = await s.read('limit=1')
    const cursor: number = page.nextCursor
    for (let round = 0; round < 3; round++) {
      // sent at once, each finds the key free: the first stored holds it, and the others (in its batch or the next) are answered through it
      const res = await Promise.all(Array.from({ length: 6 }, () => send(s.app, s, `one-batch-${round}`, { $type: 'broadcast', round })))
      t.same(
        res.map((r) => r.statusCode),
        Array(6).fill(200),
      )
      t.equal(new Set(res.map((r) => r.json().signal.id)).size, 1, 'one signal for the six')
    }
    const plain = await send(s.app, s, undefined, { $type: 'broadcast', after: 'the retries' })
    const after = await s.read(`cursor=${cursor}&limit=100`)
    t.same(
      after.signals.map((x: { payload: { round?: number; after?: string } }) => x.payload.round ?? x.payload.after),
      [0, 1, 2, 'the retries'],
      'the three signals and the next, in order, each once',
    )
    const next = await s.read(`cursor=${after.nextCursor}&wait=0`)
    t.same(next.signals, [], 'nothing after the last')
    t.ok(after.nextCursor >= plain.json().cursor, 'the cursor reached the last signal')
  })

  t.test('a key held by a reservation whose publish never stored its signal: taken over, one signal', async (t) => {
    // what a writer that reserved the key and then died leaves (publish/idempotency.ts STALE_MS is 30 s)
    const ident = (await send(s.app, s, 'whose-identity', { $type: 'broadcast' })).json().signal.origin
    await s.infra.primary.query(
      `insert into "${s.schema}".idempotency_keys (identity, key, signal_id, created_at) values ($1, 'orphaned', 'NEVERSTORED00000000X', now() - interval '1 minute')`,
      [ident],
    )
    const n = await count(s)
    const res = await send(s.app, s, 'orphaned', { $type: 'broadcast' })
    t.equal(res.statusCode, 200)
    t.equal(await count(s), n + 1, 'one signal stored')
    const row = await s.infra.primary.query<{ signal_id: string }>(
      `select signal_id from "${s.schema}".idempotency_keys where key = 'orphaned'`,
    )
    t.equal(row.rows[0]?.signal_id, res.json().signal.id, 'the key now points at it')
    t.same((await send(s.app, s, 'orphaned', { $type: 'broadcast' })).json().signal.id, res.json().signal.id, 'and a retry answers it')
  })

  t.test('keys older than 24 h are dead and the sweeper purges them', async (t) => {
    const first = (await send(s.app, s, 'old-key', { $type: 'broadcast' })).json().signal.id
    await s.infra.primary.query(`update "${s.schema}".idempotency_keys set created_at = now() - interval '25 hours' where key = 'old-key'`)
    const again = (await send(s.app, s, 'old-key', { $type: 'broadcast' })).json().signal.id
    t.not(again, first, 'a new signal after the window')
    await s.infra.primary.query(`update "${s.schema}".idempotency_keys set created_at = now() - interval '25 hours' where key = 'old-key'`)
    const purger = signalPurger(s.infra.primary, s.infra.schema)
    const report = await purgeExpired(purger, createLogger('sweeper', 'silent'), {
      graceSeconds: 86400,
      batchSize: 100,
      budgetMs: 10_000,
      pauseMs: 0,
    })
    t.match(report, { keys: 1, done: true }, 'the purge job deleted the dead key')
    const left = await s.infra.primary.query(`select 1 from "${s.schema}".idempotency_keys where key = 'old-key'`)
    t.equal(left.rowCount, 0)
  })
})

t.test('embedded: a retry answers the original signal', async (t) => {
  const s = await startStack(t, { noRedis: true, env: { DATABASE_URL: '', WIRE_DATA_DIR: 'memory://' } })
  t.equal(s.infra.primary.kind, 'embedded')
  const res = await Promise.all(Array.from({ length: 4 }, () => send(s.app, s, 'embedded-key', { $type: 'broadcast' })))
  t.equal(new Set(res.map((r) => r.json().signal.id)).size, 1, 'one signal for every retry')
  t.equal(await count(s), 1)
})
