import t, { type Test } from 'tap'
import { startBoard, type Board } from '../../apps/server/app.js'
import { startWriter } from '../../apps/writer/app.js'
import { loadConfig, type Config } from '../../libs/shared/config/index.js'
import { signalReader, type Db } from '../../libs/shared/db/index.js'
import { serializeSignal, type ReadQuery } from '../../libs/shared/domain/index.js'
import { openInfra } from '../../libs/shared/context/index.js'
import { createLogger } from '../../libs/shared/log/index.js'
import { metrics } from '../../libs/shared/metrics/index.js'
import { assertServicesUp, dropSchema, TEST_DATABASE_URL, TEST_REDIS_URL, uniqueSchema } from '../helpers/services.js'
import { until } from '../helpers/wait.js'
import { readerOn } from '../helpers/roles.js'

// The single process's read side takes its own writer's commits as they are, without reading them
// back: checked against what the database serves, and at the edges where it must read them back
// instead (a later commit handled before an earlier one, another writer's commit in between, a
// removal that reached the tail before the commit it removed). The fallback poll is a minute, so
// nothing here is rescued by it.

const quiet = createLogger('server', 'silent')
const ADMIN = 'admin-secret-token'
const everything = (cursor: number | null): ReadQuery => ({
  cursor,
  limit: 100,
  waitMs: 0,
  type: null,
  tags: [],
  origin: null,
  q: null,
  sinceMs: null,
  includeExpired: true,
  refId: null,
})
/** Feed queries the read sides of this test process made to load new signals. */
const pulls = async () => (await metrics.feedQueries.get()).values.find((v) => v.labels.kind === 'pull')?.value ?? 0
const idsOf = (jsons: string[]) => jsons.map((j) => (JSON.parse(j) as { id: string }).id)

/** The real primary, except that the answer of a statement whose parameters mention `marker` waits for `release()` (it has committed). */
function holdWritesWith(db: Db, marker: string) {
  let held: unknown[] | null = null
  let open!: () => void
  const gate = new Promise<void>((r) => (open = r))
  const gated: Db = Object.create(db) as Db
  gated.query = async (sql, params) => {
    const result = await db.query(sql, params)
    if (JSON.stringify(params ?? []).includes(marker)) {
      held = params ?? []
      await gate
    }
    return result as never
  }
  return { db: gated, held: () => held, release: () => open() }
}

function configOf(schema: string, env: Record<string, string> = {}): Config {
  return loadConfig({
    DATABASE_URL: TEST_DATABASE_URL,
    REDIS_URL: TEST_REDIS_URL,
    WIRE_PG_SCHEMA: schema,
    WIRE_CONFIG: '/nonexistent/board.json',
    SERVER_ADMIN_TOKEN: ADMIN,
    WAKE_FALLBACK_POLL_MS: '60000',
    LOG_LEVEL: 'silent',
    SHED_EVENT_LOOP_DELAY_MS: '0',
    ...env,
  })
}

/** The single process on a fresh schema; `hold`: its writer's statements mentioning that marker answer when released. */
async function boardOf(t: Test, o: { env?: Record<string, string>; hold?: string } = {}) {
  await assertServicesUp()
  const schema = uniqueSchema()
  const cfg = configOf(schema, o.env)
  const infra = await openInfra(cfg, quiet, { migrate: true })
  const gate = o.hold ? holdWritesWith(infra.primary, o.hold) : null
  const board: Board = await startBoard(cfg, quiet, { overrides: { infra: gate ? { ...infra, primary: gate.db } : infra }, sweeper: false })
  t.teardown(async () => {
    gate?.release()
    await board.close()
    await infra.close()
    await dropSchema(schema)
  })
  const post = (app: Board['app'], body: unknown, token = 'agent-one-token') =>
    app.inject({ method: 'POST', url: '/sw/signals', headers: { authorization: `Bearer ${token}` }, payload: body as object })
  const publish = async (body: unknown, token?: string) => {
    const res = await post(board.app, body, token)
    if (res.statusCode !== 200) throw new Error(`publish answered ${res.statusCode}: ${res.body}`)
    return res.json() as { signal: { id: string; uri: string }; cursor: number }
  }
  const admin = (method: 'POST' | 'DELETE', path: string) =>
    board.app.inject({ method, url: `/sw/admin${path}`, headers: { authorization: `Bearer ${ADMIN}` } })
  return { board, cfg, schema, gate, post, publish, admin, feed: board.reader.readSide.feed }
}

/** A follower: long-polls from `cursor` with its nextCursor until it holds `n` signals; every id it was given, in order. */
async function follow(feed: Board['reader']['readSide']['feed'], cursor: number, n: number, limit = 100) {
  const got: string[] = []
  for (let c = cursor; got.length < n; ) {
    const page = await feed.read({ ...everything(c), limit, waitMs: 5000, includeExpired: false })
    if (!page.signals.length && page.nextCursor === c) throw new Error(`follower timed out at ${c} holding ${got.length}/${n}`)
    got.push(...idsOf(page.signals))
    c = page.nextCursor
  }
  return got
}

t.test('a commit of this process goes into its tail as it is: no feed query, the bytes a database read serves', async (t) => {
  const s = await boardOf(t)
  const start = s.feed.head
  const before = await pulls()
  const root = await s.publish({
    $type: 'question',
    $tags: ['Alpha', 'beta'],
    $ttl: 600,
    text: 'a root',
    n: 1.5,
    nested: { é: ['ü', null] },
  })
  t.ok(s.feed.head >= root.cursor, 'the tail holds the signal by the time its publish is answered')
  const reply = await s.publish({ $type: 'reply', $refId: root.signal.uri, text: 'a reply ✓' }, 'agent-two-token')
  const burst = await Promise.all(
    Array.from({ length: 20 }, (_, i) => s.publish({ $type: 'broadcast', $tags: [`w${i % 3}`], text: `burst ${i}` }, `agent-${i}-token`)),
  )
  t.ok(s.feed.head >= Math.max(reply.cursor, ...burst.map((b) => b.cursor)), 'and a burst of publishes, batched, too')
  t.equal(await pulls(), before, 'none of them was read back from the database')

  const sql = signalReader(s.board.root.infra.readDb, s.board.root.infra.schema, { graceSeconds: s.cfg.sweep.graceSeconds })
  const fromDb = async () =>
    (await sql.pageAfter(start, 100, everything(start), Date.now())).signals.map((x) => serializeSignal(x, s.cfg.authority))
  const fromTail = async () => (await s.feed.read(everything(start))).signals
  const db = await fromDb()
  t.equal(db.length, 22)
  t.same(await fromTail(), db, 'the tail serves byte for byte what the database serves: tags, ref, expiry, pinned')

  t.equal((await s.admin('POST', `/signals/${reply.signal.id}/pin`)).statusCode, 200)
  t.match(
    (await fromTail()).find((j) => j.includes(reply.signal.id)),
    /"pinned":true/,
    'a pin reaches the tail through the change log',
  )
  t.same(await fromTail(), await fromDb(), 'and the tail still matches the database')

  const fresh = await readerOn(s.cfg, quiet, s.board.root.infra, { fallbackPollMs: 60_000 })
  t.teardown(() => fresh.close())
  t.same(
    (await fresh.readSide.feed.read(everything(start))).signals,
    await fromTail(),
    'a reader that loaded its tail from the database serves the same bytes',
  )
})

t.test('a later commit handled before an earlier one is read back: followers neither skip nor repeat', async (t) => {
  // an unverified identity's new thread commits in a transaction of its own, beside the group
  // commit's batches: the one in-process way two commits can be handled out of seq order
  const s = await boardOf(t, {
    hold: 'held-reply',
    env: { LOCAL_IDENTITY_VERIFIED: '0', UNVERIFIED_THREADS_PER_DAY: '100', UNVERIFIED_RATE_LIMIT_MAX: '1000' },
  })
  const root = await s.publish({ $type: 'question', text: 'root' })
  const from = root.cursor
  const followers = [follow(s.feed, from, 2), follow(s.feed, from, 2, 1)]
  const a = s.post(s.board.app, { $type: 'reply', $refId: root.signal.id, text: 'held-reply' }) // committed, its answer held
  await until(() => s.gate!.held() !== null, 5000, 'the reply to commit and its answer to be held')
  const pullsBefore = await pulls()
  const b = await s.publish({ $type: 'question', text: 'a later thread' }, 'agent-two-token')
  await until(() => s.feed.head >= b.cursor, 5000, 'the tail to reach the later commit')
  t.ok((await pulls()) > pullsBefore, 'the later commit did not continue the tail: it was read back, with the earlier one')
  s.gate!.release()
  const aId = ((await a).json() as { signal: { id: string }; cursor: number }).signal.id
  t.equal(b.cursor, (await a).json().cursor + 1, 'the held reply took the seq before the thread')
  for (const got of await Promise.all(followers)) t.same(got, [aId, b.signal.id], 'each follower gets both, once, in seq order')
  t.same(idsOf((await s.feed.read(everything(from))).signals), [aId, b.signal.id], 'the tail holds each once')
})

t.test("another writer's commit between two of this process's is read back before the second goes in", async (t) => {
  const s = await boardOf(t)
  // a writer that tells nobody: no Redis, no NOTIFY. Only the gap in seqs gives its commit away.
  const deaf = await startWriter(configOf(s.schema, { REDIS_URL: 'redis://127.0.0.1:1', WIRE_PG_NOTIFY: '0' }), quiet)
  t.teardown(deaf.close)
  const from = s.feed.head
  const follower = follow(s.feed, from, 3)
  const l1 = await s.publish({ $type: 'broadcast', text: 'here, first' })
  const r = (
    await deaf.app.inject({
      method: 'POST',
      url: '/sw/signals',
      headers: { authorization: 'Bearer agent-two-token' },
      payload: { $type: 'broadcast', text: 'elsewhere' },
    })
  ).json()
  t.equal(r.cursor, l1.cursor + 1)
  t.ok(s.feed.head < r.cursor, 'this process has not heard of the other commit')
  const l2 = await s.publish({ $type: 'broadcast', text: 'here, second' })
  await until(() => s.feed.head >= l2.cursor, 5000, 'the tail to reach the second commit')
  const expected = [l1.signal.id, r.signal.id, l2.signal.id]
  t.same(idsOf((await s.feed.read(everything(from))).signals), expected, "the other writer's signal is in the tail, in its place")
  t.same(await follower, expected, 'a follower gets all three, in order')
})

t.test('a removal that arrives before the commit it removes is taken in is not undone by it', async (t) => {
  const s = await boardOf(t, { hold: 'to-be-removed' })
  const from = s.feed.head
  const a = s.post(s.board.app, { $type: 'broadcast', text: 'to-be-removed' })
  await until(() => s.gate!.held() !== null, 5000, 'the signal to commit and its answer to be held')
  const stored = await s.board.root.infra.readDb.query<{ id: string }>(
    `select id from ${s.board.root.infra.schema}.signals where payload like $1`,
    ['%to-be-removed%'],
  )
  const id = stored.rows[0]!.id // committed: its id can be known elsewhere before this process handles the answer
  t.equal((await s.admin('DELETE', `/signals/${id}`)).statusCode, 200, 'removed while its commit is not yet handled')
  s.gate!.release()
  t.equal((await a).statusCode, 200)
  const later = await s.publish({ $type: 'broadcast', text: 'after' })
  await until(() => s.feed.head >= later.cursor)
  t.same(idsOf((await s.feed.read(everything(from))).signals), [later.signal.id], 'the removed signal is not served')
})
