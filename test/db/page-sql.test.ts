import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import t from 'tap'
import { checksOf, driveOf, P, PAGE_PARAMS, pageParams, pageSql, signalJsonSql } from '../../libs/shared/db/signals/page-sql.js'
import { signalColumns } from '../../libs/shared/db/signals/row.js'
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
// the parameters by name (page-sql.ts PAGE_PARAMS), numbered by the code: a header never out of step with the text
const HEADER = `-- Parameters: ${PAGE_PARAMS.map((name) => `${P[name]} ${name}`).join(', ')}.
-- from: the cursor (after) or the page's upper bound (before; unused from the head); limit: the page size;
-- batch: candidates to examine; cutoff: the expiry cutoff; authority: the board's (JSON select list);
-- the others are the read's filters (tags as text[], q lower-cased, sinceMs as a timestamp).
`
const shapes: Array<[string, Record<string, unknown>]> = [
  ['unfiltered', {}],
  ['type', { type: 'reply' }],
  ['origin', { origin: 'fp_0123456789abcdef0123' }],
  ['ref', { ref: 'abcdefghijABCDEFGHIJ' }],
  ['one-tag', { tag: 'ops' }],
  ['tags', { tag: 'ops,review' }],
  ['text', { q: 'review', since: '2030-06-15T11:00:00Z' }],
  [
    'every-filter',
    { type: 'reply', tag: 'ops', origin: 'fp_0123456789abcdef0123', q: 'review', since: '2030-06-15T11:00:00Z', includeExpired: 'true' },
  ],
]

t.test('the page statements match their checked-in .sql files', async (t) => {
  const update = process.env.WIRE_UPDATE_SQL === '1'
  const expected = new Set<string>()
  for (const [name, raw] of shapes) {
    const f = parseReadQuery(raw, NOW, 'board.example')
    const oneTag = f.tags.length === 1
    for (const [dir, fromHead] of [
      ['after', false],
      ['before', true],
    ] as const) {
      const file = `${name}.${dir === 'after' ? 'after-cursor' : 'newest'}.sql`
      expected.add(file)
      const sql = pageSql(
        ident('wire'),
        { drive: driveOf(f), dir, fromHead, oneTag },
        signalJsonSql('x', P.authority),
        checksOf(f),
        100,
        400,
      )
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

t.test('each parameter is sent at its number, and a statement is sent as many as its text refers to', async (t) => {
  const f = parseReadQuery(shapes.at(-1)![1], NOW, 'board.example')
  const cutoff = new Date(NOW)
  const at = (params: unknown[], name: (typeof PAGE_PARAMS)[number]) => params[Number(P[name].slice(1)) - 1]
  const json = pageParams({ from: 42, limit: 100, batch: 400, cutoff, filter: f, authority: 'board.example' })
  const want = {
    from: 42,
    limit: 100,
    batch: 400,
    cutoff,
    authority: 'board.example',
    type: 'reply',
    tags: ['ops'],
    origin: 'fp_0123456789abcdef0123',
    q: 'review',
    sinceMs: new Date('2030-06-15T11:00:00Z'),
    includeExpired: true,
    refId: null,
  }
  for (const name of PAGE_PARAMS) t.same(at(json, name), want[name], `${P[name]} is ${name}`)
  const rows = pageParams({ from: 42, limit: 100, batch: 400, cutoff, filter: f, authority: null })
  t.same(rows, json.slice(0, -1), 'without the JSON select list, the same values less the authority')
  const highest = (sql: string) => Math.max(...[...sql.matchAll(/\$(\d+)/g)].map((m) => Number(m[1])))
  for (const [name, raw] of shapes) {
    const g = parseReadQuery(raw, NOW, 'board.example')
    const shape = { drive: driveOf(g), dir: 'after' as const, fromHead: false, oneTag: g.tags.length === 1 }
    t.equal(
      highest(pageSql(ident('wire'), shape, signalJsonSql('x', P.authority), checksOf(g), 100, 400)),
      json.length,
      `${name}: the JSON statement refers to as many as are sent`,
    )
    t.equal(
      highest(pageSql(ident('wire'), shape, signalColumns('x'), checksOf(g), 100, 400)),
      rows.length,
      `${name}: the rows statement too`,
    )
  }
})
