import t, { type Test } from 'tap'
import type { Db } from '../../libs/shared/db/index.js'
import type { ReadQuery } from '../../libs/shared/domain/index.js'
import { CHUNK_SEQS } from '../../libs/shared/feed/chunk-cache.js'
import { hotCounts, metrics } from '../../libs/shared/metrics/index.js'
import { startStack } from '../helpers/stack.js'
import { until } from '../helpers/wait.js'

// The chunk cache (feed/chunk-cache.ts): reads below the tail, unfiltered or by tags, answered from
// memory once a read asked for their chunk. Each answer is checked against the database's own page
// at that moment, and the interleavings that could make it stale are forced: a removal, a pin, an
// expiry, a failover, and a removal while a chunk's statement is in flight.

const N = 3 * CHUNK_SEQS + 100
const ADMIN = 'admin-secret-token'
const read = (x: Partial<ReadQuery>): ReadQuery => ({
  cursor: null,
  limit: 20,
  waitMs: 0,
  type: null,
  tags: [],
  origin: null,
  q: null,
  sinceMs: null,
  includeExpired: false,
  refId: null,
  ...x,
})

/**
 * N signals by SQL as the writer stores them: tags `all`, `m<seq % 7>`, `rare` on every 97th; every 50th expired a minute ago.
 * Every payload has characters past Latin-1; every third in the first chunk also two past U+FFFF (two UTF-16 units each in JS).
 */
async function seed(db: Db, s: string) {
  await db.query(`
    with ins as (
      insert into ${s}.signals (seq, id, origin, origin_name, origin_uri, origin_verified, type, tags, payload, ref_id, ttl_seconds, created_at, expires_at)
      select i, 'c' || lpad(i::text, 19, '0'), 'o', case when i % 2 = 0 then 'Név "' || i || '"' end, 'sw://test/identities/x', true, 'note',
             case when i % 97 = 0 then array['all', 'm' || (i % 7), 'rare'] else array['all', 'm' || (i % 7)] end,
             '{"$type":"note","n":' || i || ',"s":"é\\u2028' || case when i < ${CHUNK_SEQS} and i % 3 = 0 then '😀 𝄞' else '' end || '"}', null, 3600, now() - interval '2 hours',
             case when i % 50 = 0 then now() - interval '1 minute' else now() + interval '1 hour' end
      from generate_series(1, ${N}) i returning seq, tags)
    insert into ${s}.signal_tags (tag, seq) select u.tag, ins.seq from ins cross join unnest(ins.tags) u(tag)`)
  await db.query(`update ${s}.feed_head set seq = ${N}`)
}

/** Database page statements this process has run (a read from memory runs none). */
const dbPages = async () =>
  (await metrics.feedQueries.get()).values
    .filter((v) => v.labels.kind === 'page' || v.labels.kind === 'newest')
    .reduce((n, v) => n + v.value, 0)

async function board(t: Test, env: Record<string, string> = {}) {
  const s = await startStack(t, {
    env: { READER_CHUNK_CACHE_MAX_BYTES: String(64 * 2 ** 20), WAKE_FALLBACK_POLL_MS: '60000', ...env },
    overrides: { tailSize: 20 },
    seed: (infra, schema) => seed(infra.primary, schema),
  })
  const feed = s.reader.readSide.feed
  const sql = s.reader.readSide.signals
  /** What the database answers now for `q` (the page statements themselves, no cache). */
  const truth = async (q: ReadQuery) => {
    const p =
      q.cursor === null
        ? await sql.newestJson(q.limit, q, Date.now(), s.cfg.authority)
        : await sql.pageAfterJson(q.cursor, q.limit, q, Date.now(), s.cfg.authority)
    return { signals: p.signals, nextCursor: p.upTo }
  }
  /** Reads `q` until it is answered from memory (a read below the tail asks for its chunks). */
  const fromMemory = async (q: ReadQuery) => {
    let page = await feed.read(q)
    await until(
      async () => {
        const before = await dbPages()
        page = await feed.read(q)
        return (await dbPages()) === before
      },
      5000,
      'the read to be answered from the chunk cache',
    )
    return page
  }
  const admin = (method: 'POST' | 'DELETE', path: string) =>
    s.app.inject({ method, url: `/sw/admin${path}`, headers: { authorization: `Bearer ${ADMIN}` } })
  return { s, feed, sql, truth, fromMemory, admin }
}

/** The tail's pull, now (the fallback timer is a minute): it reads the change number and the epoch. */
const refresh = (b: { feed: unknown }) => (b.feed as { sync: { refresh(): Promise<void> } }).sync.refresh()
const idOf = (seq: number) => `c${String(seq).padStart(19, '0')}`
const seqsOf = (jsons: string[]) => jsons.map((j) => Number((JSON.parse(j) as { id: string }).id.slice(1)))

t.test('pages from the chunk cache are the database pages, byte for byte', async (t) => {
  const b = await board(t)
  // the order of the feed's page sources (feed/feed.ts pageSources): the tail's newest asked after the chunk cache
  t.same(b.feed.sources.names('after'), ['tail', 'chunks', 'database'], 'after a cursor: the tail, the chunk cache, the database')
  t.same(b.feed.sources.names('newest'), ['chunks', 'tail', 'database'], 'the newest page: the chunk cache, the tail, the database')
  const queries = [
    read({ cursor: 0, limit: 7 }),
    read({ cursor: CHUNK_SEQS - 3, limit: 7 }), // across a chunk's end
    read({ cursor: 2 * CHUNK_SEQS + 40, limit: 100, includeExpired: true }),
    read({ cursor: 5, limit: 20, tags: ['rare'] }), // through every chunk into the tail
    read({ cursor: 300, limit: 30, tags: ['m3', 'rare'] }),
    read({ limit: 30, tags: ['rare'] }), // the newest page: the tail, then the chunks below it
    read({ limit: 1000, tags: ['m2'], includeExpired: true }),
  ]
  for (const q of queries)
    t.same(await b.fromMemory(q), await b.truth(q), `cursor ${q.cursor}, limit ${q.limit}, tags ${q.tags}, expired ${q.includeExpired}`)
  const memory = hotCounts.tailReads
  await b.feed.read(queries[0]!)
  t.equal(hotCounts.tailReads, memory + 1, 'counted as a read from memory (wire_tail_reads_total{from="tail"})')
})

t.test('a follower paging through the cache and the tail while signals arrive skips nothing', async (t) => {
  const b = await board(t)
  await b.fromMemory(read({ cursor: 0, limit: 7 }))
  for (let k = 1; k < 3; k++) await b.fromMemory(read({ cursor: k * CHUNK_SEQS, limit: 7 }))
  const seen: number[] = []
  let cursor = 0
  for (let i = 0; cursor < N + 5; i++) {
    if (i % 40 === 0) t.equal((await b.s.publish({ $type: 'note', text: `live ${i}` })).statusCode, 200)
    const page = await b.feed.read(read({ cursor, limit: 7, includeExpired: true }))
    seen.push(...seqsOf(page.signals.filter((j) => j.includes('"note"') && j.includes('"n":'))))
    cursor = page.nextCursor
  }
  t.same(
    seen,
    Array.from({ length: N }, (_, i) => i + 1),
    'every seeded signal once, in order',
  )
  // the newest page after the head moved past the cached chunk at the head: the tail gives what is above it
  const q = read({ limit: 40, tags: ['rare'] })
  await b.fromMemory(q)
  const pub = (await b.s.publish({ $type: 'note', $tags: ['rare'], text: 'new and rare' })).json() as { cursor: number }
  await until(() => b.feed.head >= pub.cursor, 5000, 'the tail to take the publish in')
  const page = await b.feed.read(q)
  t.match(page.signals.at(-1), /new and rare/, 'the newest rare signal is the one just published')
  t.same(page, await b.truth(q), 'and the page is the database page')
})

t.test('a removal, a pin and an expiry between two reads of a cached chunk are served as the database has them', async (t) => {
  const b = await board(t)
  const q = read({ cursor: 100, limit: 50 })
  const first = await b.fromMemory(q)
  t.ok(seqsOf(first.signals).includes(120), 'the chunk is cached with seq 120 in it')

  t.equal((await b.admin('DELETE', `/signals/${idOf(120)}`)).statusCode, 200)
  t.notOk(seqsOf((await b.feed.read(q)).signals).includes(120), 'removed by this process: never served again')
  t.equal((await b.admin('POST', `/signals/${idOf(121)}/pin`)).statusCode, 200)
  const pinned = (await b.feed.read(q)).signals.find((j) => j.includes(idOf(121)))
  t.match(pinned, /"pinned":true/, 'a pin is served at once')
  t.same(await b.fromMemory(q), await b.truth(q), 'and the cache, filled again, is the database')

  // expiry needs no change: the cache applies it at every read (the edit is read into the cache through a change number)
  await b.s.infra.primary.query(`update ${b.s.schema}.signals set expires_at = now() + interval '3 seconds' where seq = 130`)
  await b.s.infra.primary.query(`update ${b.s.schema}.feed_head set changes = changes + 1`)
  await refresh(b)
  t.ok(seqsOf((await b.fromMemory(q)).signals).includes(130), 'cached while live')
  await until(async () => !seqsOf((await b.fromMemory(q)).signals).includes(130), 10_000, 'seq 130 to expire in the cache')
  t.same(await b.fromMemory(q), await b.truth(q), 'expired in the cache as in the database')
})

t.test('a removal another process made is not served once the change number has moved, even if its message is lost', async (t) => {
  const b = await board(t)
  const q = read({ cursor: 2 * CHUNK_SEQS, limit: 10, tags: ['all'] })
  t.ok(seqsOf((await b.fromMemory(q)).signals).includes(2 * CHUNK_SEQS + 1))
  // as another writer's removal: the row and the change number, no message on the bus
  await b.s.infra.primary.query(
    `update ${b.s.schema}.signals set removed_at = now(), changed = (select changes + 1 from ${b.s.schema}.feed_head) where seq = ${2 * CHUNK_SEQS + 1}`,
  )
  await b.s.infra.primary.query(`update ${b.s.schema}.feed_head set changes = changes + 1`)
  await refresh(b)
  t.notOk(seqsOf((await b.feed.read(q)).signals).includes(2 * CHUNK_SEQS + 1), 'not served after the tail has seen the change')
  t.same(await b.fromMemory(q), await b.truth(q))
})

t.test('after a failover (the epoch moved) nothing cached from before is served', async (t) => {
  const b = await board(t)
  const q = read({ cursor: CHUNK_SEQS + 10, limit: 10 })
  t.ok(seqsOf((await b.fromMemory(q)).signals).includes(CHUNK_SEQS + 11))
  // the new primary lacks a row the old one had (an unreplicated tail of the lost primary's work), and seq jumped
  await b.s.infra.primary.query(`delete from ${b.s.schema}.signals where seq = ${CHUNK_SEQS + 11}`)
  await b.s.infra.primary.query(`update ${b.s.schema}.feed_head set failover_seq = seq + 1000, seq = seq + 1000`)
  await refresh(b)
  t.notOk(seqsOf((await b.feed.read(q)).signals).includes(CHUNK_SEQS + 11), 'the row the failover lost is not served')
})

t.test('a chunk read before a removal and answered after it is not kept', async (t) => {
  const b = await board(t)
  // hold every chunk statement's answer: its snapshot predates the removal below
  const db = b.s.infra.readDb
  let open!: () => void
  const gate = new Promise<void>((r) => (open = r))
  let held = 0
  const query = db.query.bind(db)
  db.query = (async (sql: string, params?: unknown[], o?: unknown) => {
    const result = await query(sql, params as never, o as never)
    if (sql.includes('json_build_object')) held++, await gate
    return result
  }) as typeof db.query
  t.teardown(() => ((db.query = query), open()))
  const q = read({ cursor: 500, limit: 10 })
  await b.feed.read(q) // a miss: asks for chunk 0
  await until(() => held >= 1, 5000, 'the chunk statement to have run')
  t.equal((await b.admin('DELETE', `/signals/${idOf(501)}`)).statusCode, 200)
  open()
  await until(
    async () => {
      const before = await dbPages()
      const page = await b.feed.read(q)
      t.notOk(seqsOf(page.signals).includes(501), 'the removed signal is never served')
      return (await dbPages()) === before
    },
    5000,
    'the chunk to be read again and kept',
  )
  t.same(await b.feed.read(q), await b.truth(q))
})
