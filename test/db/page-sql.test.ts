import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import t from 'tap'
import { checksOf, driveOf, pageSql, signalJsonSql } from '../../libs/shared/db/signals/page-sql.js'
import { ident } from '../../libs/shared/db/index.js'
import { parseReadQuery } from '../../libs/shared/domain/index.js'
import { projectPath } from '../../libs/shared/paths.js'

/**
 * Every shape of the page statement, written out whole to test/db/page-sql/*.sql, where a reviewer
 * reads it (and pastes it into psql with the parameters its header lists). The test fails when a
 * statement changes and its file was not updated: run it with WIRE_UPDATE_SQL=1 to write them
 * anew, and review the diff as a change of SQL.
 */
const DIR = projectPath('test/db/page-sql')
const NOW = Date.parse('2030-06-15T12:00:00.000Z')
const HEADER = `-- Parameters: $1 the cursor (after) or the page's upper bound (before; unused from the head),
-- $2 the page size, $3 type, $4 origin, $5 tags (text[]), $6 q (lower-cased), $7 since, $8 includeExpired,
-- $9 the expiry cutoff, $10 ref id, $11 candidates to examine, $12 the board's authority (JSON select list).
`
const shapes: Array<[string, Record<string, unknown>]> = [
  ['unfiltered', {}],
  ['type', { type: 'reply' }],
  ['origin', { origin: 'fp_0123456789abcdef0123' }],
  ['ref', { ref: 'abcdefghijABCDEFGHIJ' }],
  ['one-tag', { tag: 'ops' }],
  ['tags', { tag: 'ops,review' }],
  ['text', { q: 'review', since: '2030-06-15T11:00:00Z' }],
  ['every-filter', { type: 'reply', tag: 'ops', origin: 'fp_0123456789abcdef0123', q: 'review', since: '2030-06-15T11:00:00Z', includeExpired: 'true' }],
]

t.test('the page statements match their checked-in .sql files', async (t) => {
  const update = process.env.WIRE_UPDATE_SQL === '1'
  const expected = new Set<string>()
  for (const [name, raw] of shapes) {
    const f = parseReadQuery(raw, NOW, 'board.example')
    const oneTag = f.tags.length === 1
    for (const [dir, fromHead] of [['after', false], ['before', true]] as const) {
      const file = `${name}.${dir === 'after' ? 'after-cursor' : 'newest'}.sql`
      expected.add(file)
      const sql = pageSql(ident('wire'), { drive: driveOf(f), dir, fromHead, oneTag }, signalJsonSql('x', '$12'), checksOf(f), 100, 400)
      const text = `${HEADER}-- ${name}: ${JSON.stringify(raw)}, ${dir === 'after' ? 'the page after a cursor' : 'the newest page'} (drive: ${driveOf(f)})\n${sql.trim()};\n`
      const path = `${DIR}/${file}`
      if (update) writeFileSync(path, text)
      t.ok(existsSync(path), `${file} is checked in (WIRE_UPDATE_SQL=1 writes it)`)
      if (existsSync(path)) t.equal(readFileSync(path, 'utf8'), text, `${file} is the statement the code builds`)
    }
  }
  const stale = readdirSync(DIR).filter((f) => f.endsWith('.sql') && !expected.has(f))
  t.same(stale, [], 'no file is left for a shape that is gone')
})
