import t, { type Test } from 'tap'
import { BackupError, postgresDb, restoreBoardBackup, writeBoardBackup } from '../../libs/shared/db/index.js'
import { dropSchema, TEST_DATABASE_URL, uniqueSchema } from '../helpers/services.js'
import { startStack } from '../helpers/stack.js'

// A restore trusts nothing in its file: the header's feed head is bounded before any DDL, and each
// signal row is checked against the header and the protocol inside the load's transaction, so a
// refused file restores nothing, and no restored row can stand where a later publish will go.

async function backupLines(t: Test): Promise<string[]> {
  const s = await startStack(t, { noRedis: true, env: { SHED_EVENT_LOOP_DELAY_MS: '0' } })
  const first = (await s.publish({ $type: 'broadcast', $tags: ['Ops'], text: 'one' })).json().signal
  t.equal((await s.publish({ $type: 'reply', $refId: first.id, text: 'two' })).statusCode, 200)
  t.equal((await s.publish({ $type: 'offer', text: 'three' })).statusCode, 200)
  const lines: string[] = []
  await writeBoardBackup(
    s.infra.primary,
    s.schema,
    { fingerprintKey: 'k'.repeat(64), graceSeconds: 86_400 },
    async (l) => void lines.push(l),
  )
  return lines
}

/** A fresh target schema, and what a restore into it reports or throws. */
async function restoreInto(t: Test, lines: string[]) {
  const schema = uniqueSchema('rc')
  const db = postgresDb(TEST_DATABASE_URL, { max: 2 })
  t.teardown(async () => {
    await db.close()
    await dropSchema(schema)
  })
  const tables = async () =>
    (
      await db.query<{ n: number }>(
        `select count(*)::int as n from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname = $1`,
        [schema],
      )
    ).rows[0]!.n
  const signals = async () => (await db.query<{ n: number }>(`select count(*)::int as n from "${schema}".signals`)).rows[0]!.n
  const run = async function* () {
    yield* lines
  }
  const result = await restoreBoardBackup(db, schema, run(), { migrateWith: TEST_DATABASE_URL, replace: false }).catch(
    (err: unknown) => err,
  )
  return { result, tables, signals, db, schema }
}

const edit = (lines: string[], f: (x: any) => void) =>
  lines.map((l) => {
    const x = JSON.parse(l)
    f(x)
    return JSON.stringify(x)
  })

t.test('a backup restores, and what it carries passes the checks', async (t) => {
  const lines = await backupLines(t)
  const r = await restoreInto(t, lines)
  t.notOk(r.result instanceof Error, String(r.result))
  t.equal(await r.signals(), 3)
})

t.test('a signal row above the header feed head is refused, and nothing is restored', async (t) => {
  const lines = await backupLines(t)
  const bad = edit(lines, (x) => {
    if (x.t === 'signals' && x.row.type === 'offer') x.row.seq = x.row.seq + 5
  })
  const r = await restoreInto(t, bad)
  t.ok(r.result instanceof BackupError)
  t.match((r.result as Error).message, /line \d+ of the backup: signal seq \d+ is above the header's feed head \d+: nothing was restored/)
  t.equal(await r.signals(), 0, 'no signal restored')
  t.same(
    (await r.db.query(`select seq from "${r.schema}".feed_head`)).rows.map((x: any) => Number(x.seq)),
    [0],
    'the feed head untouched',
  )
})

t.test('a huge feed head is refused before any DDL (not even the migrations run)', async (t) => {
  const lines = await backupLines(t)
  for (const seq of [2 ** 53 - 1, 2 ** 48 + 1, -1]) {
    const r = await restoreInto(
      t,
      edit(lines, (x) => x.t === 'header' && (x.feedHead.seq = seq)),
    )
    t.ok(r.result instanceof BackupError, `feedHead.seq ${seq}`)
    t.match((r.result as Error).message, /feedHead\.seq .* is not a whole number from 0 to 281474976710656/)
    t.equal(await r.tables(), 0, 'no table, no partition made')
  }
  const r = await restoreInto(
    t,
    edit(lines, (x) => x.t === 'header' && (x.feedHead.changes = 2 ** 48 + 1)),
  )
  t.match((r.result as Error).message, /feedHead\.changes/)
})

t.test('a head far above its rows makes one range at the head, not one per million seq values below it', async (t) => {
  const lines = await backupLines(t)
  const far = 2 ** 40
  const r = await restoreInto(
    t,
    edit(lines, (x) => x.t === 'header' && (x.feedHead.seq = far)),
  )
  t.notOk(r.result instanceof Error, String(r.result))
  const parts = (
    await r.db.query<{ n: number }>(`select count(*)::int as n from pg_inherits where inhparent = to_regclass('"${r.schema}".signals')`)
  ).rows[0]!.n
  t.ok(parts <= 4, `${parts} partitions`)
  t.equal(await r.signals(), 3)
})

t.test('rows that break the protocol are refused, each with its line', async (t) => {
  const lines = await backupLines(t)
  const broadcastId = lines.map((l) => JSON.parse(l)).find((x) => x.t === 'signals' && x.row.type === 'broadcast').row.id
  const cases: Array<[string, (x: any) => void, RegExp]> = [
    ['a repeated seq', (x) => x.t === 'signals' && x.row.type === 'offer' && (x.row.seq = x.row.seq - 1), /does not follow/],
    [
      "a type that is not its payload's",
      (x) => x.t === 'signals' && x.row.type === 'offer' && (x.row.type = 'broadcast'),
      /type is not its payload's \$type/,
    ],
    [
      'an invisible character in the type',
      (x) =>
        x.t === 'signals' &&
        x.row.type === 'offer' &&
        ((x.row.type = 'of\u200bfer'), (x.row.payload = x.row.payload.replace('"offer"', '"of\\u200bfer"'))),
      /invisible character/,
    ],
    ['tags not normalised', (x) => x.t === 'signals' && x.row.tags.length && (x.row.tags = ['Ops']), /tags are not its payload's \$tags/],
    [
      'a payload that is not an object',
      (x) => x.t === 'signals' && x.row.type === 'offer' && (x.row.payload = '[1]'),
      /payload is not a signal/,
    ],
    [
      'an oversized payload',
      (x) => x.t === 'signals' && x.row.type === 'offer' && (x.row.payload = JSON.stringify({ $type: 'offer', text: 'x'.repeat(17_000) })),
      /payload is not a signal.*16384/,
    ],
    ['a bad id', (x) => x.t === 'signals' && x.row.type === 'offer' && (x.row.id = 'nope'), /id is not 20 letters and digits/],
    ['a ttl out of range', (x) => x.t === 'signals' && x.row.type === 'offer' && (x.row.ttl_seconds = 10 ** 9), /ttl_seconds/],
    [
      'an id twice',
      (x) => x.t === 'signals' && x.row.type === 'offer' && (x.row.id = broadcastId),
      /is in the backup twice|the database refused a row of signals.*duplicate key/,
    ],
  ]
  for (const [what, f, message] of cases) {
    const r = await restoreInto(t, edit(lines, f))
    t.ok(r.result instanceof BackupError, what)
    t.match((r.result as Error).message, message, what)
    t.equal(await r.signals(), 0, `${what}: nothing restored`)
  }
})
