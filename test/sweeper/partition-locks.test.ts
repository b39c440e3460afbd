import t, { type Test } from 'tap'
import { ident, migrate, postgresDb, type Db, type Tx, signalPartitions } from '../../libs/shared/db/index.js'
import { dropSchema, TEST_DATABASE_URL, uniqueSchema } from '../helpers/services.js'

// Making a partition takes ACCESS EXCLUSIVE on signals, its default partition and signal_tags
// (libs/shared/db/signals/partition-locks.ts). Each test holds another session's transaction at the
// point where, before the fix, the two closed a cycle of lock waits: PostgreSQL's deadlock detector
// then ended one of them after deadlock_timeout (the day bench saw "deadlock detected" when the
// writer's partition met the sweeper's purge of the default partition). Now the DDL takes its locks
// first with a short wait, gives way and runs again: both finish, neither fails.

const M = 1_000_000

async function board(t: Test): Promise<{ db: Db; other: Db; watch: Db; schema: string }> {
  const schema = uniqueSchema('ddl_locks')
  await migrate(TEST_DATABASE_URL, schema)
  const [db, other, watch] = [1, 2, 3].map(() => postgresDb(TEST_DATABASE_URL, { max: 2 }))
  t.teardown(async () => (await Promise.all([db!.close(), other!.close(), watch!.close()]), await dropSchema(schema)))
  // past half of the first partition: ensure() has one to make
  await db!.query(`update "${schema}".feed_head set seq = $1`, [M / 2 + 1])
  return { db: db!, other: other!, watch: watch!, schema }
}

/** Waits (on pg_locks, polled) until some session waits for an ACCESS EXCLUSIVE lock on `relation`. */
async function untilWaitingFor(watch: Db, relation: string): Promise<void> {
  for (;;) {
    const { rows } = await watch.query<{ n: number }>(
      `select count(*)::int as n from pg_locks where relation = to_regclass($1) and not granted and mode = 'AccessExclusiveLock'`,
      [relation],
    )
    if (rows[0]!.n > 0) return
    await new Promise((r) => setTimeout(r, 10)) // polling the lock table's state, not waiting for time
  }
}

type Board = Awaited<ReturnType<typeof board>>
const ensure = (b: Board) => signalPartitions(b.db, ident(b.schema)).ensure()

/** In `other`'s transaction: `first`, then (once `ddl` waits on `relation`) `second`; the DDL's result beside. */
async function interleave<T>(b: Board, first: string, relation: string, second: string, ddl: (b: Board) => Promise<T> = ensure as never) {
  const s = ident(b.schema)
  let made: Promise<T> | undefined
  const held = b.other.transaction(async (tx: Tx) => {
    await tx.query(first.replaceAll('$s', s))
    made = ddl(b)
    made.catch(() => {}) // its outcome is asserted below
    await untilWaitingFor(b.watch, `${s}.${relation}`)
    return (await tx.query<{ n: number }>(second.replaceAll('$s', s))).rows
  })
  const [other, ensured] = await Promise.allSettled([
    held,
    held.then(
      () => made!,
      () => made!,
    ),
  ])
  return { other, ensured }
}

t.test("the sweeper's purge of the default partition, holding its row locks, and a new partition", async (t) => {
  const b = await board(t)
  // the purge's statement: `with doomed as (select … for update skip locked) delete …` takes ROW SHARE,
  // then ROW EXCLUSIVE on the partition it purges
  const { other, ensured } = await interleave(
    b,
    'select seq from $s.signals_kept for update skip locked',
    'signals_kept',
    'with gone as (delete from $s.signals_kept where false returning seq) select count(*)::int as n from gone',
  )
  t.equal(other.status, 'fulfilled', `the purge's delete went on (${other.status === 'rejected' ? other.reason : 'ok'})`)
  t.equal(ensured.status, 'fulfilled', `the partition was made (${ensured.status === 'rejected' ? ensured.reason : 'ok'})`)
  t.same(ensured.status === 'fulfilled' && (ensured.value as { made: string[] }).made, [`signals_s${M + 1}`])
})

t.test('a tag page (signal_tags, then signals) and a new partition', async (t) => {
  const b = await board(t)
  const { other, ensured } = await interleave(
    b,
    "select g.seq from $s.signal_tags g where g.tag = 'x' limit 1",
    'signal_tags',
    'select count(*)::int as n from $s.signals',
  )
  t.equal(other.status, 'fulfilled', `the page was read (${other.status === 'rejected' ? other.reason : 'ok'})`)
  t.equal(ensured.status, 'fulfilled', `the partition was made (${ensured.status === 'rejected' ? ensured.reason : 'ok'})`)
  t.same(ensured.status === 'fulfilled' && (ensured.value as { made: string[] }).made, [`signals_s${M + 1}`])
})

t.test('a tag page and a closed partition detached', async (t) => {
  const b = await board(t)
  // the first partition closed (the head past it, counted by the rollup), the next one made
  await b.db.query(`update "${b.schema}".feed_head set seq = $1`, [M + 1])
  t.same((await ensure(b)).made, [`signals_s${M + 1}`])
  await b.db.query(`update "${b.schema}".stats_rollup set last_seq = $1`, [M + 1])
  const { other, ensured: retired } = await interleave(
    b,
    "select g.seq from $s.signal_tags g where g.tag = 'x' limit 1",
    'signal_tags',
    'select count(*)::int as n from $s.signals',
    (b) => signalPartitions(b.db, ident(b.schema)).retire(3600),
  )
  t.equal(other.status, 'fulfilled', `the page was read (${other.status === 'rejected' ? other.reason : 'ok'})`)
  t.equal(retired.status, 'fulfilled', `the partition was detached (${retired.status === 'rejected' ? retired.reason : 'ok'})`)
  t.match(retired.status === 'fulfilled' && retired.value, { dropped: 1 }, 'and dropped')
})
