import t from 'tap'
import { parseReadQuery, READ_FILTERS, type ReadQuery } from '../../libs/shared/domain/index.js'
import type { FeedPage } from '../../libs/shared/feed/page.js'
import { PageSources, type PageSource } from '../../libs/shared/feed/page-sources.js'

// The feed's page sources (feed/page-sources.ts): asked in order, each only for the reads its
// column of READ_FILTERS' `sources` says it serves, the first answer is the page. The sources here
// are the list's input (each says who it is and whether it answers), not stand-ins for the feed's.

const NOW = Date.parse('2030-06-15T12:00:00.000Z')
const q = (raw: Record<string, unknown>): ReadQuery => parseReadQuery(raw, NOW, 'board.example')
const page = (nextCursor: number): FeedPage => ({ signals: [], nextCursor })

/** Sources that write down each look they are asked for; `answers` names those that answer (the rest pass). */
function listOf(names: PageSource['name'][], answers: ReadonlySet<number>) {
  const asked: string[] = []
  const sources: PageSource[] = names.map((name, i) => ({
    name,
    after: (_q, cursor, _now, first) => (
      asked.push(`${i}:${name} after ${cursor}${first ? ' first' : ''}`), answers.has(i) ? page(100 + i) : null
    ),
    newest: (_q, _now, first) => (asked.push(`${i}:${name} newest${first ? ' first' : ''}`), answers.has(i) ? page(100 + i) : null),
  }))
  return { list: new PageSources(sources), asked }
}

t.test('the first source that answers gives the page; the ones before it were asked in order', async (t) => {
  const { list, asked } = listOf(['tail', 'chunks', 'database'], new Set([1, 2]))
  t.same(list.page(q({}), 7, NOW, true), page(101), 'the chunks answered')
  t.same(asked, ['0:tail after 7 first', '1:chunks after 7 first'], 'the tail passed first, the database was not asked')
  asked.length = 0
  t.same(list.page(q({}), null, NOW, false), page(101), 'no cursor: the newest page')
  t.same(asked, ['0:tail newest', '1:chunks newest'])
})

t.test('a source is asked only for the reads its column of READ_FILTERS says it serves', async (t) => {
  const { list, asked } = listOf(['chunks', 'database'], new Set([0, 1]))
  for (const f of READ_FILTERS) {
    const setting = {
      type: { type: 'reply' },
      tags: { tag: 'ops' },
      origin: { origin: 'o' },
      q: { q: 'x' },
      sinceMs: { since: '1h' },
      includeExpired: { includeExpired: '1' },
      refId: { ref: 'abcdefghijABCDEFGHIJ' },
    }[f.key]
    asked.length = 0
    const answer = list.page(q(setting), 3, NOW, false)
    t.same(
      answer,
      page(f.sources.chunks ? 100 : 101),
      `${f.param}: ${f.sources.chunks ? 'the chunks answer' : 'the chunks are passed over'}`,
    )
    t.same(asked, f.sources.chunks ? ['0:chunks after 3'] : ['1:database after 3'], `${f.param}: asked as its row says`)
  }
})

t.test('a source with no column in READ_FILTERS cannot join the list', async (t) => {
  // @ts-expect-error the compiler refuses a name no filter has declared anything about
  const undeclared: PageSource = { name: 'redis', after: () => page(1) }
  t.throws(
    () => new PageSources([undeclared, { name: 'database', after: () => page(2) }]),
    /no column in READ_FILTERS/,
    'and so does the list, if a cast got it past',
  )
})

t.test('a source without a look of a kind is not asked for it; none answering is an error, not a page', async (t) => {
  const asked: string[] = []
  const list = new PageSources([
    { name: 'tail', newest: () => (asked.push('newest'), null) },
    { name: 'database', after: () => (asked.push('after'), null) },
  ])
  t.same(list.names('after'), ['database'])
  t.same(list.names('newest'), ['tail'])
  t.throws(() => list.page(q({}), 1, NOW, true), /no page source answered/)
  t.throws(() => list.page(q({}), null, NOW, true), /no page source answered/)
  t.same(asked, ['after', 'newest'])
})
