import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { pgliteDb } from '../../libs/shared/db/index.js'

// Roots of one process on one WIRE_DATA_DIR (a network in one process) share one PGlite: two
// instances on one directory would write the same files, and the directory lock only stops other
// processes. The database closes when the last holder closes it.

// a first open creates the database (from its template; by initdb where none fits): seconds to a minute on a busy machine
t.setTimeout(180_000)

t.test('one directory, one instance per process, closed by its last holder', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'wire-shared-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const data = join(dir, 'data')
  const [a, b] = await Promise.all([pgliteDb(data), pgliteDb(`${dir}/./data`)])
  t.equal(a.pglite, b.pglite, 'two opens of one directory (spelled two ways), at once: one instance')
  await a.exec('create table shared (n int); insert into shared values (1)')
  t.same((await b.query('select n from shared')).rows, [{ n: 1 }], 'what one holder writes, the other reads')
  await a.close()
  await a.close()
  t.same((await b.query('select count(*)::int c from shared')).rows, [{ c: 1 }], 'one holder closing (twice) leaves the other working')
  t.ok(existsSync(join(data, 'wire.lock')), 'and the directory locked')
  const c = await pgliteDb(data)
  t.equal(c.pglite, b.pglite, 'a later open joins the open instance')
  await Promise.all([b.close(), c.close()])
  t.notOk(existsSync(join(data, 'wire.lock')), 'the last holder closes it: the lock is gone')
  t.ok(b.pglite.closed, 'and the instance is closed')
  const again = await pgliteDb(data)
  t.not(again.pglite, b.pglite, 'opened afresh after that')
  t.same((await again.query('select n from shared')).rows, [{ n: 1 }], 'with the data')
  await again.close()
})
