import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { pgliteDb } from '../../libs/shared/db/index.js'
import { pgliteVersion, templateStamp, templateUsable } from '../../libs/shared/db/pglite-template.js'

// The embedded database's template (libs/shared/db/pglite-template.ts): made by the installed PGlite
// (else every first start falls back to initdb and its double peak), and a database loaded from it
// is the database initdb makes.

t.setTimeout(300_000)

t.test('the committed template was made by the installed PGlite (after an upgrade: npm run embedded:template)', async (t) => {
  t.same(templateStamp(), { pglite: pgliteVersion() })
  t.ok(templateUsable())
})

/** What a fresh database is made of: its catalog, settings and databases, without what varies by run. */
async function shapeOf(db: Awaited<ReturnType<typeof pgliteDb>>) {
  const q = async (sql: string) => (await db.query<Record<string, unknown>>(sql)).rows
  return {
    version: await q('show server_version'),
    databases: await q('select datname, pg_encoding_to_char(encoding) as encoding, datcollate, datctype from pg_database order by datname'),
    relations: await q(
      "select c.relkind, count(*)::int as n from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname in ('pg_catalog', 'information_schema') group by 1 order by 1",
    ),
    roles: await q('select rolname, rolsuper from pg_roles order by rolname'),
    settings: await q(
      "select name, setting from pg_settings where name in ('shared_buffers', 'max_connections', 'lc_messages', 'timezone', 'datestyle') order by name",
    ),
    extensions: await q('select extname from pg_extension order by extname'),
    schemas: await q('select nspname from pg_namespace order by nspname'),
  }
}

t.test('a database loaded from the template is the one initdb makes', async (t) => {
  const made = await pgliteDb('memory://', { template: false })
  t.teardown(() => made.close())
  const loaded = await pgliteDb('memory://')
  t.teardown(() => loaded.close())
  const [a, b] = [await shapeOf(made), await shapeOf(loaded)]
  t.ok(a.relations.length > 0 && a.databases.length > 0, 'there is a catalog to compare')
  t.same(b, a)
})

t.test('on disk: a first open loads it into an owner-only directory, and a later open keeps what was written', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'wire-template-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const data = join(dir, 'data')
  const first = await pgliteDb(data)
  await first.exec('create table kept (x int); insert into kept values (42)')
  await first.close()
  t.ok(existsSync(join(data, 'PG_VERSION')), 'a data directory')
  t.equal(statSync(data).mode & 0o777, 0o700, 'the owner’s only')
  t.equal(statSync(join(data, 'PG_VERSION')).mode & 0o777, 0o600, 'its files too')
  const again = await pgliteDb(data)
  t.teardown(() => again.close())
  t.same((await again.query('select x from kept')).rows, [{ x: 42 }], 'not loaded over')
})
