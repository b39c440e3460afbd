import { readFileSync } from 'node:fs'
import pg from 'pg'
import t from 'tap'
import { TEST_DATABASE_URL } from '../helpers/services.js'
import { eventually } from '../helpers/wait.js'
import { INDEX_BATCH } from '../../apps/aggregator/search/index-store.js'
import { startHostileBoard } from '../../bench/lib/hostile-board.js'
import { startAggregatorProcess, startBoardProcess } from './processes.js'
import { auth, startTestAggregator, startTestBoard, publishOn, searchFinds } from './support.js'

// Boards run by an attacker, followed by the aggregator: what it reads from them is bounded as it
// streams, what it indexes is held to the protocol and to each board's quota, and the boards that
// behave are still followed and searched.

const rssKb = (pid: number) => Number(/^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1])
const boardOf = async (agg: string, authority: string) => ((await (await fetch(`${agg}/registry/boards/${authority}`)).json()) as any).board

t.test(
  'a huge page and a gzip bomb are cut as they stream: the aggregator grows by a few MB, and the boards are marked, not followed',
  async (t) => {
    const good = await startBoardProcess(t)
    const agg = await startAggregatorProcess(t, { AGGREGATOR_REGISTER_RATE_LIMIT_MAX: '0', AGGREGATOR_RECHECK_SECONDS: '3600' })
    const register = (url: string) =>
      fetch(`${agg.url}/registry/boards`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...auth() },
        body: JSON.stringify({ url }),
      })
    t.equal((await register(good.url)).status, 201)
    t.equal((await publishOn(good.url, 'before narwhal')).status, 200)
    t.ok(await eventually(() => searchFinds(agg.url, 'narwhal'), 15_000), 'the good board is followed')
    const before = rssKb(agg.pid())

    const huge = await startHostileBoard(t, 'huge', { hugeBytes: 150 * 1024 * 1024 })
    const bomb = await startHostileBoard(t, 'gzip', { hugeBytes: 150 * 1024 * 1024 })
    for (const h of [huge, bomb]) t.equal((await register(h.url)).status, 201, 'the hostile board registers (its discovery is correct)')
    for (const h of [huge, bomb])
      t.ok(
        await eventually(async () => (await boardOf(agg.url, h.authority)).overQuota?.reason === 'page_too_large', 30_000),
        `${h.authority} is marked over quota: page_too_large`,
      )
    const grew = (rssKb(agg.pid()) - before) / 1024
    t.ok(grew < 24, `the aggregator's RSS grew by ${grew.toFixed(1)} MB reading a 150 MB page and a bomb of 150 MB (unbounded: hundreds)`)
    const pages = huge.pages + bomb.pages
    t.equal((await publishOn(good.url, 'after walrus')).status, 200)
    t.ok(await eventually(() => searchFinds(agg.url, 'walrus'), 15_000), 'the good board is still followed')
    t.equal(huge.pages + bomb.pages, pages, 'the marked boards are not asked again')
  },
)

t.test("a pinned flood stops at the board's quota; oversized signals, foreign uris and far expiries are not indexed", async (t) => {
  const good = await startTestBoard(t)
  const agg = await startTestAggregator(t, {
    AGGREGATOR_REGISTER_RATE_LIMIT_MAX: '0',
    AGGREGATOR_BOARD_INDEX_ROWS_MAX: '250',
    AGGREGATOR_BOARD_PAGES_PER_MINUTE: '6000',
    AGGREGATOR_PIN_HORIZON_SECONDS: '600',
  })
  const db = new pg.Client({ connectionString: TEST_DATABASE_URL })
  await db.connect()
  t.teardown(() => db.end())
  const s = agg.cfg.aggregator.schema
  const rows = async (board: string) =>
    Number((await db.query(`select count(*) n from "${s}".indexed_signals where board = $1`, [board])).rows[0].n)

  const pinned = await startHostileBoard(t, 'pinned')
  const oversized = await startHostileBoard(t, 'oversized')
  const foreign = await startHostileBoard(t, 'foreign')
  for (const b of [good, pinned, oversized, foreign]) t.equal((await agg.register(b.url)).status, 201)
  t.ok(
    await eventually(async () => (await boardOf(agg.url, pinned.authority)).overQuota?.reason === 'index_quota', 30_000),
    'the pinned flood is marked over quota',
  )
  t.ok((await rows(pinned.authority)) <= 250, `it holds ${await rows(pinned.authority)} rows, at most its quota of 250`)
  const listed = await boardOf(agg.url, pinned.authority)
  t.equal(listed.indexed.rows, await rows(pinned.authority), 'the registry counts its share as the index holds it')
  const asked = pinned.pages
  const horizon = (
    await db.query(`select max(expires_at) - now() < interval '601 seconds' ok from "${s}".indexed_signals where board = $1`, [
      pinned.authority,
    ])
  ).rows[0].ok
  t.equal(horizon, true, 'pinned signals leave at the pin horizon, not never')
  // each insert statement of a transaction has its own command id (cmin): rows and bytes per statement
  const statements = (
    await db.query(
      `select count(*)::int rows, sum(bytes)::int bytes, max(bytes)::int largest from "${s}".indexed_signals where board = $1 group by xmin, cmin`,
      [pinned.authority],
    )
  ).rows as Array<{ rows: number; bytes: number; largest: number }>
  const most = Math.max(...statements.map((x) => x.rows))
  t.ok(statements.length > 1 && most <= INDEX_BATCH.rows, `its pages were written ${most} rows a statement at most (${INDEX_BATCH.rows})`)
  t.ok(
    statements.every((x) => x.bytes <= Math.max(INDEX_BATCH.bytes, x.largest)),
    `and at most ${INDEX_BATCH.bytes} bytes a statement (most: ${Math.max(...statements.map((x) => x.bytes))}): a page is never one statement`,
  )

  t.ok(await eventually(() => oversized.pages > 2 && foreign.pages > 2, 15_000), 'the other two were read')
  t.equal(await rows(oversized.authority), 0, 'no signal past 16 KiB of payload is indexed')
  t.equal(await rows(foreign.authority), 0, 'no signal naming another board, nor one expiring in 2099')
  const metrics = await (await fetch(`${agg.url}/metrics`)).text()
  for (const reason of ['payload', 'uri', 'ttl'])
    t.match(metrics, new RegExp(`wire_aggregator_signals_refused_total\\{reason="${reason}"\\} [1-9]`), `refused for ${reason}, counted`)

  t.equal((await publishOn(good.url, 'good narwhal')).status, 200)
  t.ok(await eventually(() => searchFinds(agg.url, 'narwhal'), 15_000), 'the board that behaves is still searched')
  t.equal(pinned.pages, asked, 'the board over quota is no longer asked')
})
