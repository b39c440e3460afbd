import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import t, { type Test } from 'tap'
import { ident, listMigrations, migrate, pgliteDb, readBoardId } from '../../libs/shared/db/index.js'
import { assertServicesUp, dropSchema, TEST_DATABASE_URL, uniqueSchema } from '../helpers/services.js'
import { eventually } from '../helpers/wait.js'

// The migration runner against the machine's PostgreSQL (and PGlite), with migration files of the
// test's own in a temporary directory.

function migrationsDir(t: Test, files: Record<string, string>) {
  const dir = mkdtempSync(join(tmpdir(), 'wire-migrations-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  for (const [name, sql] of Object.entries(files)) writeFileSync(join(dir, name), sql)
  return dir
}

async function client(t: Test) {
  const c = new pg.Client({ connectionString: TEST_DATABASE_URL })
  await c.connect()
  t.teardown(() => c.end())
  return c
}

function boardSchema(t: Test) {
  const schema = uniqueSchema('mig')
  t.teardown(() => dropSchema(schema))
  return schema
}

/** Backends of the migration runner waiting on an advisory lock, by the statement they wait in. */
const waitingRunners = async (c: pg.Client, statement: RegExp) =>
  (
    await c.query<{ query: string }>(
      `select query from pg_stat_activity where application_name = 'wire-migrate' and wait_event_type = 'Lock' and wait_event = 'advisory'`,
    )
  ).rows.filter((r) => statement.test(r.query)).length

t.before(assertServicesUp)

t.test('the runner holds its lock for the whole run, not per transaction', async (t) => {
  const schema = boardSchema(t)
  const gate = `${schema}:gate`
  // 0002 waits on a lock the test holds, after 0001 has committed: a runner with only
  // transaction-scoped locks would let a second runner start meanwhile
  const dir = migrationsDir(t, {
    '0001_things.sql': 'create table things (x int);',
    '0002_wait.sql': `-- no-transaction\nselect pg_advisory_lock(hashtext('${gate}'));`,
  })
  const c = await client(t)
  await c.query('select pg_advisory_lock(hashtext($1))', [gate])
  const first = migrate(TEST_DATABASE_URL, schema, { dir })
  t.ok(await eventually(async () => (await waitingRunners(c, new RegExp(gate))) === 1), 'the first runner applied 0001 and waits in 0002')
  const second = migrate(TEST_DATABASE_URL, schema, { dir })
  t.ok(await eventually(async () => (await waitingRunners(c, /hashtext\(\$1\)/)) === 1), 'the second runner waits for the migration lock')
  t.equal((await c.query(`select count(*)::int as n from "${schema}".schema_migrations`)).rows[0].n, 1, 'only 0001 is recorded meanwhile')
  await c.query('select pg_advisory_unlock(hashtext($1))', [gate])
  t.same(await first, { applied: ['0001_things.sql', '0002_wait.sql'] }, 'the first runner applied both')
  t.same(await second, { applied: [] }, 'the second found nothing to do')
})

t.test('a file whose first line is -- no-transaction runs outside a transaction', async (t) => {
  const schema = boardSchema(t)
  const files = {
    '0001_things.sql': 'create table things (x int);\ninsert into things values (1);',
    '0002_things_idx.sql':
      '-- no-transaction\n-- PostgreSQL refuses this inside a transaction\ncreate index concurrently things_x_idx on things (x);\n',
  }
  t.same(
    listMigrations(migrationsDir(t, files)).map((m) => [m.name, m.noTransaction]),
    [
      ['0001_things.sql', false],
      ['0002_things_idx.sql', true],
    ],
    'the marker is read from the first line only',
  )
  t.same(await migrate(TEST_DATABASE_URL, schema, { dir: migrationsDir(t, files) }), {
    applied: ['0001_things.sql', '0002_things_idx.sql'],
  })
  const c = await client(t)
  const idx = await c.query(
    `select i.indisvalid from pg_index i join pg_class c on c.oid = i.indexrelid join pg_namespace n on n.oid = c.relnamespace where n.nspname = $1 and c.relname = 'things_x_idx'`,
    [schema],
  )
  t.same(idx.rows, [{ indisvalid: true }], 'the index exists, in the board schema, and is valid')
  t.same(await migrate(TEST_DATABASE_URL, schema, { dir: migrationsDir(t, files) }), { applied: [] }, 'recorded: not run twice')

  // the same statement without the marker: PostgreSQL refuses it, and nothing is recorded
  const other = boardSchema(t)
  const unmarked = migrationsDir(t, { ...files, '0002_things_idx.sql': 'create index concurrently things_x_idx on things (x);' })
  await t.rejects(migrate(TEST_DATABASE_URL, other, { dir: unmarked }), /cannot run inside a transaction block/)
  const rows = await c.query(`select name from "${other}".schema_migrations order by name`)
  t.same(rows.rows, [{ name: '0001_things.sql' }], 'the failed file is not recorded')
})

t.test('PGlite: the real migrations apply once and give the board a random id', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'wire-pglite-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const db = await pgliteDb(dir)
  t.teardown(() => db.close())
  const all = listMigrations().map((m) => m.name)
  t.ok(all.includes('0005_board_id.sql'))
  t.same(await migrate(db, 'public'), { applied: all })
  t.same(await migrate(db, 'public'), { applied: [] }, 'nothing twice')
  const id = await readBoardId(db, ident('public'))
  t.match(id, /^[0-9a-f]{32}$/)
  t.equal(await readBoardId(db, ident('public')), id, 'stable')
})

t.test('PostgreSQL: every board gets its own id', async (t) => {
  const [a, b] = [boardSchema(t), boardSchema(t)]
  await migrate(TEST_DATABASE_URL, a)
  await migrate(TEST_DATABASE_URL, b)
  const c = await client(t)
  const ids = await Promise.all([a, b].map((s) => readBoardId(c, ident(s)).catch(() => '')))
  t.match(ids, [/^[0-9a-f]{32}$/, /^[0-9a-f]{32}$/])
  t.not(ids[0], ids[1])
})
