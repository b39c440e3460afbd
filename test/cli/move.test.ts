import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import t, { type Test } from 'tap'
import { startBoard } from '../../apps/server/app.js'
import { loadConfig } from '../../libs/shared/config/index.js'
import { ident, pgliteDb, statsWriter } from '../../libs/shared/db/index.js'
import { createLogger } from '../../libs/shared/log/index.js'
import { dropSchema, TEST_DATABASE_URL, uniqueSchema } from '../helpers/services.js'
import { startStack } from '../helpers/stack.js'
import { wire } from './run.js'

// `wire move`, `wire backup` and `wire restore` as child processes of the built code: a trial board
// on the embedded database (started as `npm start` starts it) moves to PostgreSQL, and its
// followers, identities, pins, metadata, rules and stats come along. One embedded board for the
// whole file: PGlite's first creation takes seconds.

const ADMIN = 'admin-secret-token'
const [A, B, C] = ['agent-a-token', 'agent-b-token', 'agent-c-token']
const dir = mkdtempSync(join(tmpdir(), 'wire-move-'))
const schema = uniqueSchema('mv')
const copy = uniqueSchema('mv')
t.teardown(async () => {
  rmSync(dir, { recursive: true, force: true })
  await dropSchema(schema)
  await dropSchema(copy)
})
// no shedding on event-loop delay: this file is not about it, and PGlite on a busy machine passes 1 s
const embeddedEnv = {
  WIRE_DATA_DIR: join(dir, 'data'),
  WIRE_CONFIG: '/nonexistent/subwire.config.json',
  SERVER_ADMIN_TOKEN: ADMIN,
  LOG_LEVEL: 'silent',
  SHED_EVENT_LOOP_DELAY_MS: '0',
}
const pgEnv = (s: string) => ({ ...embeddedEnv, DATABASE_URL: TEST_DATABASE_URL, WIRE_PG_SCHEMA: s })
const noStack = (t: Test, err: string) => t.notMatch(err, /^\s+at /m, 'one clear message, no stack trace')

const q = async (sql: string, params: unknown[] = []) => {
  const c = new pg.Client({ connectionString: TEST_DATABASE_URL })
  await c.connect()
  try {
    return (await c.query(sql, params)).rows
  } finally {
    await c.end()
  }
}

t.test('a trial board moves to PostgreSQL: cursors, identities, pins, metadata, rules and stats', async (t) => {
  // the trial board, on the embedded database
  const cfg = loadConfig(embeddedEnv)
  const board = await startBoard(cfg, createLogger('server', 'silent'), { sweeper: false })
  const app = board.app
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` })
  // a signal with its feed position (the publish answer's cursor)
  const publish = async (token: string, body: object) => {
    const r = (await app.inject({ method: 'POST', url: '/sw/signals', headers: bearer(token), payload: body })).json()
    return { ...r.signal, seq: r.cursor as number }
  }
  const admin = async (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) =>
    (await app.inject({ method, url, headers: bearer(ADMIN), ...(payload && { payload }) })).json()

  const one = await publish(A, { $type: 'broadcast', $tags: ['x'], text: 'one' })
  const two = await publish(B, { $type: 'broadcast', text: 'two', n: [1, 2] })
  const reply = await publish(A, { $type: 'reply', $refId: one.id, text: 'to one' })
  const pinned = await publish(A, { $type: 'notice', text: 'pin me' })
  const gone = await publish(B, { $type: 'broadcast', text: 'removed' })
  const fromC = await publish(C, { $type: 'broadcast', text: 'before the rule' })
  t.ok(one && two && reply && pinned && gone && fromC, 'published on the embedded board')
  await admin('POST', `/sw/admin/signals/${pinned.id}/pin`)
  await admin('DELETE', `/sw/admin/signals/${gone.id}`)
  await admin('PATCH', '/sw/admin/wire', {
    name: 'trial',
    description: 'a board that moved',
    allowedSignalTypes: ['broadcast', 'reply', 'notice'],
  })
  const rule = (await admin('POST', '/sw/admin/rules', { ruleType: 'deny', identityId: fromC.origin })).rule
  // some signals counted into the stats history, the rest still past the rollup's cursor
  await statsWriter(board.root.infra.primary, ident('public')).rollUp(3)
  const stats = async (inject: typeof app.inject) => {
    const r = (await inject({ url: '/sw/stats?bucketSeconds=3600&buckets=6' })).json()
    return { buckets: r.buckets, activeSignals: r.current.activeSignals, activeIdentities: r.current.activeIdentities }
  }
  const statsBefore = await stats(app.inject.bind(app))
  t.equal(
    statsBefore.buckets.reduce((n: number, b: { signals: number }) => n + b.signals, 0),
    6,
    'every signal counted',
  )

  // two followers: one at the head, one part of the way
  const head = (await app.inject({ url: '/sw/signals' })).json().nextCursor as number
  t.equal(head, fromC.seq)
  const midway = one.seq

  const busy = await wire(['move'], pgEnv(schema))
  t.equal(busy.code, 1, 'a running board is not moved')
  t.match(busy.err, /in use by process \d+: stop it/)
  noStack(t, busy.err)
  await board.close()

  const moved = await wire(['move'], pgEnv(schema))
  t.equal(moved.code, 0, moved.err)
  t.match(
    moved.out,
    /moved from the embedded database in .*data \(schema public\): 6 signals \(1 pinned\), 1 rule, \d+ stats minutes?.* to PostgreSQL \(schema mv_.*\); feed head 6/,
  )

  const again = await wire(['move'], pgEnv(schema))
  t.equal(again.code, 1, 'a second move into the same schema is refused')
  t.match(again.err, /already holds a board with signals \(feed head 6\).*--replace/)
  noStack(t, again.err)

  // the board on PostgreSQL
  const s = await startStack(t, { env: { WIRE_PG_SCHEMA: schema, SERVER_ADMIN_TOKEN: ADMIN }, noRedis: true })
  const read = async (query: string) => (await s.app.inject({ url: `/sw/signals?${query}` })).json()
  const meta = (await s.app.inject({ url: '/sw/wire' })).json()
  t.match(meta, { name: 'trial', description: 'a board that moved', allowedSignalTypes: ['broadcast', 'reply', 'notice'] }, 'metadata')
  t.same((await s.app.inject({ url: '/sw/admin/rules', headers: bearer(ADMIN) })).json().rules, [rule], 'rules')
  t.same(await stats(s.app.inject.bind(s.app)), statsBefore, 'stats')
  const pin = (await s.app.inject({ url: `/sw/signals/${pinned.id}` })).json()
  t.match(pin, { signal: { id: pinned.id, pinned: true } }, 'the pinned signal, still pinned')
  t.equal((await s.app.inject({ url: `/sw/signals/${gone.id}` })).statusCode, 404, 'the removed signal stays removed')
  t.same(
    (await read('tag=x&cursor=0')).signals.map((x: { id: string }) => x.id),
    [one.id],
    'a tag filter finds the moved signal (its tag rows were rebuilt)',
  )
  t.same(
    (await read(`cursor=${midway}`)).signals.map((x: { id: string }) => x.id),
    [two.id, reply.id, pinned.id, fromC.id],
    'a follower part of the way reads on from its cursor',
  )
  const idle = await read(`cursor=${head}`)
  t.same(idle.signals, [], 'the follower at the head sees nothing old again')
  t.equal(idle.nextCursor, head, 'and keeps its cursor')

  // after the move: the same tokens are the same identities, and the follower sees each new signal once
  const after = [
    (await s.publish({ $type: 'broadcast', text: 'after 1' }, A)).json(),
    (await s.publish({ $type: 'broadcast', text: 'after 2' }, B)).json(),
  ]
  t.equal(after[0].signal.origin, one.origin, 'the same token, the same origin')
  t.equal(after[1].signal.origin, two.origin)
  t.same(
    after.map((x) => x.cursor),
    [head + 1, head + 2],
    'new signals continue the feed',
  )
  const denied = await s.publish({ $type: 'broadcast', text: 'after the rule' }, C)
  t.equal(denied.statusCode, 403, 'the deny rule still stops the same identity')
  const next = await read(`cursor=${head}`)
  t.same(
    next.signals.map((x: { id: string }) => x.id),
    after.map((x) => x.signal.id),
    'every new signal, once',
  )
  t.same((await read(`cursor=${next.nextCursor}`)).signals, [], 'nothing twice')

  // a backup file of the moved board restores
  const file = join(dir, 'board.ndjson')
  const backup = await wire(['backup', '--to', file], pgEnv(schema))
  t.equal(backup.code, 0, backup.err)
  t.match(backup.out, /backed up 8 signals \(1 pinned\), 1 rule,/)
  t.equal(statSync(file).mode & 0o777, 0o600, 'the backup (it holds the fingerprint key) is readable by its owner only')
  const lines = readFileSync(file, 'utf8').trimEnd().split('\n')
  t.match(JSON.parse(lines[0]!), { t: 'header', format: 'wire-board-backup', feedHead: { seq: head + 2 } })
  t.match(JSON.parse(lines.at(-1)!), { t: 'end', counts: { signals: 8, rules: 1, board: 1 } })

  const over = await wire(['restore', '--from', file], pgEnv(schema))
  t.equal(over.code, 1, 'a restore over a board with signals is refused')
  t.match(over.err, /already holds a board with signals.*--replace/)
  noStack(t, over.err)

  const restored = await wire(['restore', '--from', file], pgEnv(copy))
  t.equal(restored.code, 0, restored.err)
  t.match(restored.out, /restored 8 signals \(1 pinned\).* feed head 8/)
  const snapshot = async (x: string) => ({
    signals: await q(
      `select seq, id, origin, type, tags, payload, ref_id, created_at, expires_at, pinned, removed_at, changed from "${x}".signals order by seq`,
    ),
    head: await q(`select seq, changes from "${x}".feed_head`),
    board: await q(`select name, description, allowed_signal_types, seeded_at, updated_at, fingerprint_key from "${x}".board`),
    rules: await q(`select * from "${x}".rules order by id`),
    stats: await q(`select * from "${x}".stats_buckets order by at, origin`),
    rollup: await q(`select last_seq from "${x}".stats_rollup`),
  })
  const original = await snapshot(schema)
  t.same(await snapshot(copy), original, 'the restored board is the backed-up one, row for row')
  t.ok(original.board[0].fingerprint_key, 'the board carries its fingerprint key')
  const ids = await q(`select (select board_id from "${schema}".board) as a, (select board_id from "${copy}".board) as b`)
  t.not(ids[0].a, ids[0].b, 'the copy keeps a board id of its own (its wake-up channels and Redis keys)')

  const cut = join(dir, 'cut.ndjson')
  writeFileSync(cut, `${lines.slice(0, -1).join('\n')}\n`)
  const partial = await wire(['restore', '--replace', '--from', cut], pgEnv(copy))
  t.equal(partial.code, 1, 'a file cut short is refused')
  t.match(partial.err, /ends before its end line.*nothing was restored/)
  noStack(t, partial.err)
  t.same(await snapshot(copy), original, 'and changes nothing')

  const replaced = await wire(['restore', '--replace', '--from', '-'], pgEnv(copy), readFileSync(file, 'utf8'))
  t.equal(replaced.code, 0, `--replace, from standard input ${replaced.err}`)
  t.same(await snapshot(copy), original)
  const secret = await wire(['restore', '--replace', '--from', file], { ...pgEnv(copy), FINGERPRINT_SECRET: 'another-key-entirely' })
  t.equal(secret.code, 0, secret.err)
  t.match(
    secret.err,
    /warning: FINGERPRINT_SECRET is set here and is not the board's key/,
    'a secret that would change every identity is pointed out',
  )

  // a board far along its feed: the target makes range partitions up to the head, so no row waits in the default one
  const far = (line: string) => {
    const x = JSON.parse(line)
    if (x.t === 'header') x.feedHead.seq += 3_000_000
    if (x.t === 'signals') x.row.seq += 3_000_000
    return JSON.stringify(x)
  }
  const farFile = join(dir, 'far.ndjson')
  writeFileSync(farFile, `${lines.map(far).join('\n')}\n`)
  const farOut = await wire(['restore', '--replace', '--from', farFile], pgEnv(copy))
  t.equal(farOut.code, 0, farOut.err)
  t.match(farOut.out, /feed head 3000008/)
  t.same(await q(`select count(*)::int as n from "${copy}".signals_kept`), [{ n: 0 }], 'no restored row in the default partition')
  t.same(await q(`select count(*)::int as n from "${copy}".signals where seq > 3000000`), [{ n: 8 }])

  // and back onto the embedded database, over the trial board
  const onTrial = await wire(['restore', '--from', file], embeddedEnv)
  t.equal(onTrial.code, 1, 'the trial board still has its signals')
  noStack(t, onTrial.err)
  const back = await wire(['restore', '--replace', '--from', file], embeddedEnv)
  t.equal(back.code, 0, back.err)
  const local = await pgliteDb(embeddedEnv.WIRE_DATA_DIR)
  try {
    const row = async (sql: string) => (await local.query<Record<string, unknown>>(sql)).rows
    t.same(
      (await row(`select seq, id, origin, payload, pinned from public.signals order by seq`)).map((r) => ({ ...r, seq: String(r.seq) })),
      original.signals.map((r) => ({ seq: String(r.seq), id: r.id, origin: r.origin, payload: r.payload, pinned: r.pinned })),
      'the embedded board holds the same signals',
    )
    t.same(
      await row(`select fingerprint_key from public.board`),
      [{ fingerprint_key: original.board[0].fingerprint_key }],
      'and the same key',
    )
  } finally {
    await local.close()
  }
})

t.test('what cannot be moved or restored says why in one line', async (t) => {
  const notBackup = join(dir, 'not-a-backup.json')
  writeFileSync(notBackup, '{"name":"a board file"}\n')
  const cases: Array<[string[], Record<string, string>, RegExp]> = [
    [['move'], embeddedEnv, /wire move needs DATABASE_URL/],
    [['move'], { ...pgEnv(copy), WIRE_DATA_DIR: join(dir, 'nothing-here') }, /no embedded board in .*nothing-here \(WIRE_DATA_DIR\)/],
    [
      ['backup', '--to', join(dir, 'x.ndjson')],
      { ...embeddedEnv, WIRE_DATA_DIR: join(dir, 'nothing-here') },
      /no embedded board in .*nothing-here/,
    ],
    [['restore', '--from', join(dir, 'absent.ndjson')], pgEnv(copy), /ENOENT: no such file or directory/],
    [['restore', '--from', notBackup], pgEnv(copy), /not a Wire board backup/],
    [['restore', '--from', notBackup], { ...pgEnv(copy), DATABASE_URL: 'postgres://root@127.0.0.1:1/test' }, /not a Wire board backup/],
    [
      ['backup', '--to', join(dir, 'x.ndjson')],
      { ...pgEnv(copy), DATABASE_URL: 'postgres://root@127.0.0.1:1/test' },
      /cannot reach the database: .*ECONNREFUSED/,
    ],
  ]
  for (const [args, env, message] of cases) {
    const r = await wire(args, env)
    t.equal(r.code, 1, `wire ${args.join(' ')} fails`)
    t.match(r.err, message)
    noStack(t, r.err)
  }
  t.same(
    readdirSync(dir).filter((f) => f.startsWith('x.ndjson')),
    [],
    'a failed backup leaves no file behind',
  )
})
