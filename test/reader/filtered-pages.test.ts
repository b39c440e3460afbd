import t from 'tap'
import {
  ident,
  migrate,
  pgliteDb,
  postgresDb,
  SCAN_BUDGET,
  signalReader,
  TEXT_SCAN_BUDGET,
  type Db,
  type Queryable,
} from '../../libs/shared/db/index.js'
import { serializeSignal, type ReadFilter } from '../../libs/shared/domain/index.js'
import { dropSchema, TEST_DATABASE_URL, uniqueSchema } from '../helpers/services.js'

// Filtered reads drive from one index range (db/signals/page-sql.ts): pages of sparse tags, types,
// origins and their combinations are complete and in order however far behind, and a request
// examines a bounded number of rows, counted by EXPLAIN ANALYZE on the statements it ran.

const N = 100_000
const all: ReadFilter = { type: null, tags: [], origin: null, q: null, sinceMs: null, includeExpired: false, refId: null }
const f = (x: Partial<ReadFilter>): ReadFilter => ({ ...all, ...x })
// the board: `rare` tags 0.1 % of it, `t_rare` types ~0.1 %, `o_rare` is the origin of ~0.1 %
const rareTag = (seq: number) => seq % 1000 === 7
const rareType = (seq: number) => seq % 997 === 3
const rareOrigin = (seq: number) => seq % 1009 === 5 || seq % 1000 === 7 // every `rare` signal too: the combination has matches
const needle = 9_000 // the one signal whose payload says "needle"

/** N signals straight into the table with their tag rows, as the writer stores them (dense seq, head moved). Never analysed. */
async function seed(db: Queryable, s: string) {
  await db.query(`
    with rows as (
      select i as seq, case when i % 1000 = 7 then array['common', 'rare'] else array['common', 'c' || (i % 10)] end as tags
      from generate_series(1, ${N}) i),
    ins as (
      insert into ${s}.signals (seq, id, origin, origin_name, origin_uri, origin_verified, type, tags, payload, ref_id, ttl_seconds, created_at, expires_at)
      select seq, 's' || lpad(seq::text, 19, '0'), case when seq % 1009 = 5 or seq % 1000 = 7 then 'o_rare' else 'o' || (seq % 7) end,
             case when seq % 2 = 0 then null else 'Név "' || seq || E'"\\n\\u0001' end, 'sw://test/identities/x', seq % 3 = 0,
             case when seq % 997 = 3 then 't_rare' else 'common' end, tags,
             case when seq = ${needle} then '{"$type":"common","text":"a needle"}' else '{"$type":"common","n":' || seq || ',"s":"é\\u2028"}' end,
             case when seq % 5 = 0 then 's0000000000000000001' end, 3600, now() + seq * interval '1 millisecond' - interval '1 minute',
             now() + seq * interval '1 millisecond' + interval '1 hour'
      from rows returning seq, tags)
    insert into ${s}.signal_tags (tag, seq) select u.tag, ins.seq from ins cross join unnest(ins.tags) u(tag)`)
  await db.query(`update ${s}.feed_head set seq = ${N}`)
}

const literal = (v: unknown): string =>
  v === null
    ? 'null'
    : v instanceof Date
      ? `'${v.toISOString()}'`
      : Array.isArray(v)
        ? `'{${v.map((x) => `"${x}"`).join(',')}}'`
        : typeof v === 'string'
          ? `'${v.replaceAll("'", "''")}'`
          : String(v)

/**
 * Rows every scan of the statement produced or filtered out, by EXPLAIN ANALYZE: as planned for
 * these parameters, and on PostgreSQL also as the generic plan a prepared statement settles on.
 */
async function examined(db: Db, sql: string, params: unknown[]): Promise<number> {
  const custom = count((await db.query<{ 'QUERY PLAN': unknown }>(`explain (analyze, format json) ${sql}`, params)).rows)
  if (db.kind !== 'postgres') return custom
  const generic = await db.transaction(async (tx) => {
    await tx.exec(`set local plan_cache_mode = force_generic_plan; prepare generic_page as ${sql}`)
    const { rows } = await tx.query<{ 'QUERY PLAN': unknown }>(
      `explain (analyze, format json) execute generic_page(${params.map(literal).join(', ')})`,
    )
    await tx.exec('deallocate generic_page')
    return count(rows)
  })
  return Math.max(custom, generic)
}

function count(rows: Array<{ 'QUERY PLAN': unknown }>): number {
  const plan = rows[0]!['QUERY PLAN']
  let n = 0
  const walk = (node: Record<string, any>) => {
    if (node['Relation Name'] && node['Relation Name'] !== 'feed_head')
      n +=
        ((node['Actual Rows'] ?? 0) + (node['Rows Removed by Filter'] ?? 0) + (node['Rows Removed by Index Recheck'] ?? 0)) *
        (node['Actual Loops'] ?? 1)
    for (const c of node.Plans ?? []) walk(c)
  }
  walk((typeof plan === 'string' ? JSON.parse(plan) : plan)[0].Plan)
  return n
}

/** A Queryable that keeps the statements a read ran, to EXPLAIN them afterwards. */
function recording(db: Queryable) {
  const ran: Array<[string, unknown[]]> = []
  return { ran, db: { query: (sql: string, params?: unknown[]) => (ran.push([sql, params ?? []]), db.query(sql, params)) } as Queryable }
}

const boards: Array<[string, () => Promise<{ db: Db; s: string; done: () => Promise<void> }>]> = [
  [
    'PostgreSQL',
    async () => {
      const s = uniqueSchema()
      const db = postgresDb(TEST_DATABASE_URL, { max: 2 })
      await migrate(TEST_DATABASE_URL, s)
      return { db, s: `"${s}"`, done: async () => (await db.close(), await dropSchema(s)) }
    },
  ],
  [
    'PGlite',
    async () => {
      const db = await pgliteDb('memory://')
      await migrate(db, 'wire')
      return { db, s: 'wire', done: () => db.close() }
    },
  ],
]

for (const [name, open] of boards)
  t.test(`${name}: sparse filters read complete pages at one page of index work`, async (t) => {
    const { db, s, done } = await open()
    t.teardown(done)
    await seed(db, s)
    const rec = recording(db)
    const reader = signalReader(rec.db, ident(s.replaceAll('"', '')), { graceSeconds: 60 })
    const now = Date.now()
    const expect = (p: (seq: number) => boolean) => Array.from({ length: N }, (_, i) => i + 1).filter(p)

    const cases: Array<[string, ReadFilter, (seq: number) => boolean]> = [
      ['tag 0.1 %', f({ tags: ['rare'] }), rareTag],
      ['type', f({ type: 't_rare' }), rareType],
      ['origin', f({ origin: 'o_rare' }), rareOrigin],
      ['tag and origin', f({ tags: ['rare'], origin: 'o_rare' }), (x) => rareTag(x) && rareOrigin(x)],
      ['two tags, one sparse', f({ tags: ['rare', 'c3'] }), (x) => rareTag(x) || x % 10 === 3],
      ['type and origin', f({ type: 't_rare', origin: 'o_rare' }), (x) => rareType(x) && rareOrigin(x)],
    ]
    for (const [what, filter, p] of cases) {
      const want = expect(p)
      rec.ran.length = 0
      const newest = await reader.newest(100, filter, now)
      t.same(
        newest.signals.map((x) => x.seq),
        want.slice(-100),
        `${what}: the newest page is the newest 100, oldest first`,
      )
      t.equal(newest.partial, false)
      let rows = 0
      for (const [sql, params] of rec.ran) rows += await examined(db, sql, params)
      t.ok(rows <= 4 * 100, `${what}: the newest page examined ${rows} rows (at most 4 per signal of the page)`)
      if (filter.tags.includes('c3')) continue // a dense filter: walking it all is not the point
      // a follower from far behind, 7 at a time: every match once, in order
      const seen: number[] = []
      let cursor = 0
      let maxRows = 0
      for (let i = 0; i < 200; i++) {
        rec.ran.length = 0
        const page = await reader.pageAfter(cursor, 7, filter, now)
        seen.push(...page.signals.map((x) => x.seq))
        let r = 0
        for (const [sql, params] of rec.ran) r += await examined(db, sql, params)
        maxRows = Math.max(maxRows, r)
        if (page.upTo >= page.head) break
        t.ok(page.upTo > cursor, 'moves on')
        cursor = page.upTo
      }
      t.same(seen, want, `${what}: a follower from 0 sees every match once, in order`)
      // the drive alone: the page (7, rounded up to the statement's 8); a filter checked per row: the
      // first query's max(4 × 7, 256) candidates; each candidate an index entry and its row
      const bound = filter.tags.length + (filter.type ? 1 : 0) + (filter.origin ? 1 : 0) === 1 ? 2 * 8 : 2 * 256
      t.ok(maxRows <= bound, `${what}: a cursor page examined ${maxRows} rows, at most ${bound}`)
    }

    // selectivity 0: nothing matches, and the request examines nothing
    rec.ran.length = 0
    t.same((await reader.newest(100, f({ tags: ['nowhere'] }), now)).signals, [])
    t.same((await reader.pageAfter(10, 100, f({ type: 'nowhere' }), now)).signals, [])
    t.same((await reader.pageAfter(10, 100, f({ origin: 'nowhere', tags: ['nowhere'] }), now)).upTo, N, 'to the head: nothing there')
    t.equal(rec.ran.length, 3, 'one query per page')
    for (const [sql, params] of rec.ran) t.equal(await examined(db, sql, params), 0, 'no row examined')

    // `q` matching nothing: bounded, and honest about where it stopped
    rec.ran.length = 0
    const none = await reader.newest(100, f({ q: 'nothing has this' }), now)
    t.same([none.signals.length, none.partial], [0, true], 'the newest page with q says it stopped short')
    let rows = 0
    for (const [sql, params] of rec.ran) rows += await examined(db, sql, params)
    t.ok(rows <= TEXT_SCAN_BUDGET, `q matching nothing examined ${rows} rows, at most TEXT_SCAN_BUDGET`)
    // and a follower from 0 finds the one match far behind, walking on from each honest nextCursor
    let cursor = 0
    const found: number[] = []
    for (let i = 0; i < 100 && cursor < N; i++) {
      const page = await reader.pageAfter(cursor, 100, f({ q: 'needle' }), now)
      found.push(...page.signals.map((x) => x.seq))
      t.equal(page.partial, page.upTo < page.head, 'partial exactly when it stopped below the head')
      t.ok(page.upTo - cursor <= TEXT_SCAN_BUDGET, 'each page examined at most TEXT_SCAN_BUDGET rows')
      cursor = page.upTo
    }
    t.same(found, [needle], 'found once, nothing skipped')
    t.ok(SCAN_BUDGET >= TEXT_SCAN_BUDGET)

    // the JSON PostgreSQL writes is byte for byte serializeSignal's
    for (const filter of [all, f({ tags: ['rare'] })]) {
      const rowsPage = await reader.pageAfter(49_990, 30, filter, now)
      const jsonPage = await reader.pageAfterJson(49_990, 30, filter, now, 'board.example:4000')
      t.same(
        jsonPage.signals,
        rowsPage.signals.map((x) => serializeSignal(x, 'board.example:4000')),
        'the same bytes as serializeSignal',
      )
      t.equal(jsonPage.upTo, rowsPage.upTo)
    }
  })
