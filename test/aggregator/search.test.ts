import pg from 'pg'
import t from 'tap'
import { recheckDeps } from '../../apps/aggregator/rechecks.js'
import { recheckBoards } from '../../apps/aggregator/registry/recheck.js'
import { TEST_DATABASE_URL } from '../helpers/services.js'
import { eventually, until } from '../helpers/wait.js'
import { ADMIN, auth, startTestAggregator, startTestBoard, type TestBoard } from './support.js'

// Search across three real boards that the aggregator follows with the client library.

const publish = async (b: TestBoard, body: object) => {
  const r = await fetch(`${b.url}/sw/signals`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...auth() },
    body: JSON.stringify(body),
  })
  if (r.status !== 200) throw new Error(`publish: ${r.status}`)
  return ((await r.json()) as any).signal as { id: string; uri: string }
}
const search = async (url: string, query: string): Promise<any> => (await fetch(`${url}/search/signals?${query}`)).json()

t.test('search finds a signal from each board, with its board; filters; a long-poll wakes on a new match', async (t) => {
  const boards = await Promise.all([startTestBoard(t), startTestBoard(t), startTestBoard(t)])
  const agg = await startTestAggregator(t)
  for (const b of boards) t.equal((await agg.register(b.url)).status, 201)
  const sent = await Promise.all(
    boards.map((b, i) =>
      publish(b, { $type: i === 0 ? 'offer' : 'broadcast', $tags: [`board${i}`], text: `lighthouse keeper number ${i}` }),
    ),
  )
  t.ok(await eventually(async () => (await search(agg.url, 'q=lighthouse')).signals.length === 3, 10_000), 'all three indexed')
  const all = await search(agg.url, 'q=lighthouse')
  t.same(
    new Set(all.signals.map((s: any) => `${s.board} ${s.id}`)),
    new Set(boards.map((b, i) => `${b.authority} ${sent[i]!.id}`)),
    'each signal with the board it came from',
  )
  t.equal(all.signals[0].uri, `sw://${all.signals[0].board}/signals/${all.signals[0].id}`, "the board's own sw:// URI")
  t.type(all.nextCursor, 'number')
  t.type(all.serverNow, 'string')
  t.same(
    (await search(agg.url, 'q=keeper&tag=board1')).signals.map((s: any) => s.id),
    [sent[1]!.id],
    'tag',
  )
  t.same(
    (await search(agg.url, 'type=offer')).signals.map((s: any) => s.id),
    [sent[0]!.id],
    'type',
  )
  t.same(
    (await search(agg.url, `board=${boards[2]!.authority}`)).signals.map((s: any) => s.id),
    [sent[2]!.id],
    'board',
  )
  t.equal((await search(agg.url, 'q=submarine')).signals.length, 0, 'no match')
  t.equal((await search(agg.url, 'since=2h')).signals.length, 3, 'since')
  const bad = await fetch(`${agg.url}/search/signals?limit=x`)
  t.equal(bad.status, 400, 'bad input is a 400')
  t.equal(((await bad.json()) as any).error.code, 'invalid_request')

  // paging by the aggregator's own cursor: limit 1 from the start walks every signal once
  const seen: string[] = []
  let cursor = 0
  for (let i = 0; i < 10; i++) {
    const p = await search(agg.url, `cursor=${cursor}&limit=1`)
    seen.push(...p.signals.map((s: any) => s.id))
    if (p.nextCursor === cursor) break
    cursor = p.nextCursor
  }
  t.same(new Set(seen), new Set(sent.map((s) => s.id)), 'paged one at a time, nothing missed or repeated')
  t.equal(seen.length, 3)

  const t0 = Date.now()
  const poll = search(agg.url, `q=albatross&cursor=${all.nextCursor}&wait=20`)
  await until(() => agg.started().ctx.search.waiting === 1, 5000, 'the search to wait') // registered before anything is published
  await publish(boards[1]!, { $type: 'broadcast', text: 'an unrelated signal' })
  const hit = await publish(boards[2]!, { $type: 'broadcast', text: 'the albatross lands' })
  const woke = await poll
  t.same(
    woke.signals.map((s: any) => s.id),
    [hit.id],
    'woken by the matching signal only',
  )
  t.ok(Date.now() - t0 < 15_000, 'woken, not timed out')
})

t.test('a signal that expires, or is removed on its board, leaves the search', async (t) => {
  const board = await startTestBoard(t)
  const agg = await startTestAggregator(t)
  t.equal((await agg.register(board.url)).status, 201)
  const gone = await publish(board, { $type: 'broadcast', text: 'moderated walrus' })
  const expiring = await publish(board, { $type: 'broadcast', $ttl: 10, text: 'fleeting walrus' })
  const stays = await publish(board, { $type: 'broadcast', text: 'steady walrus' })
  const ids = async () => new Set((await search(agg.url, 'q=walrus')).signals.map((s: any) => s.id))
  t.ok(await eventually(async () => (await ids()).size === 3, 10_000), 'indexed')
  // time passing for one signal: its expiry, as the board gave it, moved into the past
  const db = new pg.Client({ connectionString: TEST_DATABASE_URL })
  await db.connect()
  t.teardown(() => db.end())
  await db.query(`update "${agg.cfg.aggregator.schema}".indexed_signals set expires_at = now() - interval '2 minutes' where id = $1`, [
    expiring.id,
  ])
  t.same(await ids(), new Set([gone.id, stays.id]), 'expired: gone from search at once')
  const removed = await fetch(`${board.url}/sw/admin/signals/${gone.id}`, { method: 'DELETE', headers: auth(ADMIN) })
  t.ok(removed.status < 300, 'removed on the board')
  const ctx = agg.started().ctx
  const counts = await recheckBoards(recheckDeps(ctx, ctx.log, 2000), new AbortController().signal)
  t.match(counts, { up: 1, removed: 1, expired: 1 }, 'the recheck finds the removal and purges the expired row')
  t.same(await ids(), new Set([stays.id]), 'removed: gone from search')
})
