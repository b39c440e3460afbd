import pg from 'pg'
import t from 'tap'
import { assertServicesUp, createDatabase, TEST_DATABASE_URL } from '../helpers/services.js'

// `npm test` on a fresh PostgreSQL: the helpers create the test database when it is missing
// (assertServicesUp does it for TEST_DATABASE_URL; here on a database of this file's own).

t.test('a missing database is created, and creating it twice is fine', async (t) => {
  await assertServicesUp()
  const url = new URL(TEST_DATABASE_URL)
  url.pathname = `/wire_created_${process.pid}`
  const admin = new URL(TEST_DATABASE_URL)
  admin.pathname = '/postgres'
  const exists = async () => {
    const c = new pg.Client({ connectionString: admin.toString() })
    await c.connect()
    try {
      return (await c.query('select 1 from pg_database where datname = $1', [url.pathname.slice(1)])).rowCount === 1
    } finally {
      await c.end()
    }
  }
  t.teardown(async () => {
    const c = new pg.Client({ connectionString: admin.toString() })
    await c.connect()
    await c.query(`drop database if exists "${url.pathname.slice(1)}"`)
    await c.end()
  })
  t.notOk(await exists(), 'missing at first')
  t.equal(await createDatabase(url.toString()), true, 'created')
  t.ok(await exists(), 'now it exists')
  t.equal(await createDatabase(url.toString()), true, 'a second create (another test file first) is fine')
  const c = new pg.Client({ connectionString: url.toString() })
  await c.connect()
  t.same((await c.query('select 1 as one')).rows, [{ one: 1 }], 'and it takes connections')
  await c.end()
})
