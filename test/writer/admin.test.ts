import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { startReader } from '../../apps/reader/app.js'
import { fingerprint } from '../../libs/shared/auth/index.js'
import { loadConfig } from '../../libs/shared/config/index.js'
import { createLogger } from '../../libs/shared/log/index.js'
import { TEST_DATABASE_URL } from '../helpers/services.js'
import { startStack, type Stack } from '../helpers/stack.js'
import { eventually } from '../helpers/wait.js'
import { writerOn } from '../helpers/roles.js'

// The admin API on /sw/admin and /sw/v1/admin (docs/protocol.md "Lifecycle and operators") and the
// board file (WIRE_CONFIG).

const TOKEN = 'admin-secret-token'
const ADMIN = { authorization: `Bearer ${TOKEN}` }
const PREFIXES = ['/sw/admin', '/sw/v1/admin']
const SOME_ID = 'AAAAAAAAAAAAAAAAAAAA'

/** Every admin route, with a body where it takes one. */
const ROUTES: Array<{ method: 'GET' | 'PATCH' | 'POST' | 'DELETE'; path: string; payload?: object }> = [
  { method: 'GET', path: '/wire' },
  { method: 'PATCH', path: '/wire', payload: { description: 'x' } },
  { method: 'GET', path: '/rules' },
  { method: 'POST', path: '/rules', payload: { ruleType: 'deny', identityId: 'fp_00000000000000000000' } },
  { method: 'DELETE', path: '/rules/rl_nope' },
  { method: 'DELETE', path: `/signals/${SOME_ID}` },
  { method: 'POST', path: `/signals/${SOME_ID}/pin` },
  { method: 'DELETE', path: `/signals/${SOME_ID}/pin` },
]

const errorOf = (res: { statusCode: number; json: () => any }) => ({ status: res.statusCode, code: res.json()?.error?.code })
/** The environment the stack was built from, enough to build another process's config on the same board. */
const envOf = (s: Stack) => ({
  DATABASE_URL: TEST_DATABASE_URL,
  WIRE_PG_SCHEMA: s.schema,
  WIRE_CONFIG: '/nonexistent/subwire.config.json',
  LOG_LEVEL: 'silent',
})
const backdate = (s: Stack, id: string) =>
  s.infra.primary.query(`update "${s.schema}".signals set expires_at = now() - interval '1 minute' where id = $1`, [id])

t.test('with SERVER_ADMIN_TOKEN unset every admin route is 501 admin_disabled', async (t) => {
  const s = await startStack(t, { env: { SERVER_ADMIN_TOKEN: '' } })
  t.equal(s.cfg.secrets.adminToken, undefined, 'an empty SERVER_ADMIN_TOKEN means unset')
  for (const prefix of PREFIXES)
    for (const r of ROUTES)
      for (const headers of [{}, ADMIN, { authorization: 'Bearer anything-at-all' }]) {
        const res = await s.app.inject({ method: r.method, url: prefix + r.path, headers, ...(r.payload && { payload: r.payload }) })
        t.same(errorOf(res), { status: 501, code: 'admin_disabled' }, `${r.method} ${prefix}${r.path} ${JSON.stringify(headers)}`)
      }
})

t.test('the admin API', async (t) => {
  const s = await startStack(t)
  const admin = (method: 'GET' | 'PATCH' | 'POST' | 'DELETE', path: string, payload?: unknown, prefix = '/sw/admin') =>
    s.app.inject({ method, url: prefix + path, headers: ADMIN, ...(payload !== undefined && { payload: payload as object }) })

  t.test('needs the admin token: missing or wrong is 401 unauthorized', async (t) => {
    const wrong = [
      undefined,
      'Bearer wrong-token',
      `Bearer ${TOKEN}x`,
      `Bearer ${TOKEN.slice(0, -1)}`,
      `Basic ${Buffer.from(`admin:${TOKEN}`).toString('base64')}`,
      TOKEN,
      'Bearer',
      `Bearer ${TOKEN} extra`,
    ]
    let n = 0 // each from an address of its own: one address's failures are budgeted (test/abuse/budget-coverage.test.ts)
    for (const prefix of PREFIXES)
      for (const r of ROUTES)
        for (const authorization of wrong) {
          const remoteAddress = `10.9.${Math.floor(n / 250)}.${n++ % 250}`
          const res = await s.app.inject({
            method: r.method,
            url: prefix + r.path,
            remoteAddress,
            headers: authorization === undefined ? {} : { authorization },
            ...(r.payload && { payload: r.payload }),
          })
          t.same(errorOf(res), { status: 401, code: 'unauthorized' }, `${r.method} ${prefix}${r.path} with ${authorization}`)
        }
    t.equal(
      (await s.app.inject({ url: '/sw/admin/wire', headers: { authorization: `bearer   ${TOKEN}  ` } })).statusCode,
      200,
      'the scheme is case-insensitive and the token trimmed',
    )
  })

  t.test('GET /wire is the board metadata including allowedSignalTypes', async (t) => {
    for (const prefix of PREFIXES) {
      const res = await admin('GET', '/wire', undefined, prefix)
      t.equal(res.statusCode, 200)
      t.same(res.json(), {
        uri: 'sw://localhost:4000',
        authority: 'localhost:4000',
        name: 'main',
        description: null,
        allowedSignalTypes: null,
        stats: { activeSignals: 0, activeIdentities: 0, recentPollers: 0 },
      })
    }
  })

  t.test('PATCH /wire', async (t) => {
    t.test('changes what is sent and returns the updated metadata', async (t) => {
      const res = await admin('PATCH', '/wire', {
        name: '  Ops board ',
        description: 'For the ops agents',
        allowedSignalTypes: [' offer ', 'reply'],
      })
      t.equal(res.statusCode, 200)
      t.match(res.json(), {
        name: 'Ops board',
        description: 'For the ops agents',
        allowedSignalTypes: ['offer', 'reply'],
        uri: 'sw://localhost:4000',
      })
      const pub = (await s.app.inject({ url: '/sw/wire' })).json()
      t.match(pub, { name: 'Ops board', description: 'For the ops agents', allowedSignalTypes: ['offer', 'reply'] })
      const disco = (await s.app.inject({ url: '/.well-known/wire' })).json()
      t.match(disco.subwires, [{ name: 'Ops board', description: 'For the ops agents' }], 'discovery agrees')
      t.match(disco.subwire, { name: 'Ops board', description: 'For the ops agents' }, 'in both of its board fields')
    })
    t.test('keeps the fields it is not sent', async (t) => {
      const res = await admin('PATCH', '/wire', { description: 'Changed' }, '/sw/v1/admin')
      t.match(res.json(), { name: 'Ops board', description: 'Changed', allowedSignalTypes: ['offer', 'reply'] })
      t.match((await admin('PATCH', '/wire', {})).json(), { name: 'Ops board', description: 'Changed' }, 'an empty patch changes nothing')
    })
    t.test('null resets: the name to main, the description to none, the types to unrestricted', async (t) => {
      const res = await admin('PATCH', '/wire', { name: null, description: null, allowedSignalTypes: null })
      t.match(res.json(), { name: 'main', description: null, allowedSignalTypes: null })
    })
    t.test('accepts the limits: name 128, description 2048, types of 128 characters', async (t) => {
      const res = await admin('PATCH', '/wire', {
        name: 'n'.repeat(128),
        description: 'd'.repeat(2048),
        allowedSignalTypes: ['t'.repeat(128)],
      })
      t.equal(res.statusCode, 200)
      await admin('PATCH', '/wire', { name: null, description: null, allowedSignalTypes: null })
    })
    t.test('anything else is 400 invalid_request and changes nothing', async (t) => {
      const before = (await admin('GET', '/wire')).json()
      const bad: unknown[] = [
        { name: '' },
        { name: '   ' },
        { name: 'n'.repeat(129) },
        { name: 5 },
        { description: 'd'.repeat(2049) },
        { description: 7 },
        { allowedSignalTypes: 'offer' },
        { allowedSignalTypes: [''] },
        { allowedSignalTypes: [5] },
        { allowedSignalTypes: ['t'.repeat(129)] },
        { allowedSignalTypes: {} },
        { colour: 'blue' },
        { name: 'ok', extra: 1 },
        [],
        'name',
      ]
      for (const body of bad)
        t.same(errorOf(await admin('PATCH', '/wire', body)), { status: 400, code: 'invalid_request' }, JSON.stringify(body))
      for (const raw of ['', '{', 'null', '{"name":"a","name":"b"'])
        t.same(
          errorOf(
            await s.app.inject({
              method: 'PATCH',
              url: '/sw/admin/wire',
              headers: { ...ADMIN, 'content-type': 'application/json' },
              payload: raw,
            }),
          ),
          { status: 400, code: 'invalid_request' },
          raw,
        )
      t.same((await admin('GET', '/wire')).json(), before)
    })
  })

  t.test('rules', async (t) => {
    t.test('start empty', async (t) => {
      t.same((await admin('GET', '/rules')).json(), { rules: [] })
    })
    let denyId = ''
    t.test('POST adds a rule: 201 {rule}', async (t) => {
      const res = await admin('POST', '/rules', { ruleType: 'deny', identityId: 'fp_aaaaaaaaaaaaaaaaaaaa' })
      t.equal(res.statusCode, 201)
      const { rule } = res.json()
      t.same(Object.keys(rule).sort(), ['createdAt', 'id', 'identityId', 'ruleType'])
      t.match(rule, { ruleType: 'deny', identityId: 'fp_aaaaaaaaaaaaaaaaaaaa' })
      t.type(rule.id, 'string')
      t.ok(Number.isFinite(Date.parse(rule.createdAt)))
      denyId = rule.id
    })
    t.test('the same pair again is 200 with the existing rule', async (t) => {
      const res = await admin('POST', '/rules', { ruleType: 'deny', identityId: ' fp_aaaaaaaaaaaaaaaaaaaa ' }, '/sw/v1/admin')
      t.equal(res.statusCode, 200)
      t.equal(res.json().rule.id, denyId)
    })
    t.test('the other rule type for the same identity is a new rule', async (t) => {
      const res = await admin('POST', '/rules', { ruleType: 'allow', identityId: 'fp_aaaaaaaaaaaaaaaaaaaa' })
      t.equal(res.statusCode, 201)
      t.not(res.json().rule.id, denyId)
    })
    t.test('GET lists them all', async (t) => {
      for (const prefix of PREFIXES) {
        const { rules } = (await admin('GET', '/rules', undefined, prefix)).json()
        t.equal(rules.length, 2)
        t.same(rules.map((r: { ruleType: string }) => r.ruleType).sort(), ['allow', 'deny'])
      }
    })
    t.test('a bad rule is 400 invalid_request', async (t) => {
      for (const body of [
        { ruleType: 'block', identityId: 'x' },
        { ruleType: 'deny' },
        { identityId: 'x' },
        { ruleType: 'deny', identityId: '' },
        { ruleType: 'deny', identityId: 5 },
        { ruleType: 'deny', identityId: 'x', note: 'y' },
        { ruleType: 'deny', identityId: 'x'.repeat(257) },
        [],
        'deny',
      ])
        t.same(errorOf(await admin('POST', '/rules', body)), { status: 400, code: 'invalid_request' }, JSON.stringify(body))
      t.equal((await admin('GET', '/rules')).json().rules.length, 2)
    })
    t.test('DELETE removes a rule: 200 {ok:true}, then 404', async (t) => {
      const del = await admin('DELETE', `/rules/${denyId}`)
      t.equal(del.statusCode, 200)
      t.same(del.json(), { ok: true })
      t.same(errorOf(await admin('DELETE', `/rules/${denyId}`)), { status: 404, code: 'not_found' })
      t.same(errorOf(await admin('DELETE', '/rules/rl_unknown', undefined, '/sw/v1/admin')), { status: 404, code: 'not_found' })
      const { rules } = (await admin('GET', '/rules')).json()
      t.equal(rules.length, 1)
      for (const r of rules) await admin('DELETE', `/rules/${r.id}`)
    })
    t.test('changes are effective on the next publish', async (t) => {
      const token = 'admin-test-agent'
      const id = (await s.publish({ $type: 'broadcast' }, token)).json().signal.origin
      const rule = (await admin('POST', '/rules', { ruleType: 'deny', identityId: id })).json().rule
      t.same(errorOf(await s.publish({ $type: 'broadcast' }, token)), { status: 403, code: 'forbidden' })
      await admin('DELETE', `/rules/${rule.id}`)
      t.equal((await s.publish({ $type: 'broadcast' }, token)).statusCode, 200)
      await admin('PATCH', '/wire', { allowedSignalTypes: ['offer'] })
      t.same(errorOf(await s.publish({ $type: 'broadcast' }, token)), { status: 403, code: 'forbidden' })
      await admin('PATCH', '/wire', { allowedSignalTypes: null })
      t.equal((await s.publish({ $type: 'broadcast' }, token)).statusCode, 200)
    })
  })

  t.test('moderation removal', async (t) => {
    t.test('removes a signal everywhere; its replies stay', async (t) => {
      const root = (await s.publish({ $type: 'request', text: 'root' })).json().signal
      const reply = (await s.publish({ $type: 'reply', $refId: root.id, text: 'reply' })).json().signal
      const res = await admin('DELETE', `/signals/${root.id}`)
      t.equal(res.statusCode, 200)
      t.same(res.json(), { ok: true })
      t.same(errorOf(await s.app.inject({ url: `/sw/signals/${root.id}` })), { status: 404, code: 'not_found' }, 'by id')
      t.same(errorOf(await s.app.inject({ url: `/sw/signals/${root.id}/thread` })), { status: 404, code: 'not_found' }, 'its thread')
      const feed = await s.read('includeExpired=1')
      t.notOk(
        feed.signals.some((x: { id: string }) => x.id === root.id),
        'not in the feed',
      )
      t.ok(
        feed.signals.some((x: { id: string }) => x.id === reply.id),
        'the reply is in the feed',
      )
      const r = await s.app.inject({ url: `/sw/signals/${reply.id}` })
      t.equal(r.statusCode, 200, 'the reply is served by id')
      t.equal(r.json().signal.refId, root.id, 'and still names its parent')
      t.same(errorOf(await admin('DELETE', `/signals/${root.id}`)), { status: 404, code: 'not_found' }, 'a second removal is 404')
    })
    t.test('a removed reply leaves the thread; its own replies stay in it', async (t) => {
      const root = (await s.publish({ $type: 'request' })).json().signal
      const mid = (await s.publish({ $type: 'reply', $refId: root.id })).json().signal
      const leaf = (await s.publish({ $type: 'reply', $refId: mid.id })).json().signal
      t.equal((await admin('DELETE', `/signals/${mid.id}`, undefined, '/sw/v1/admin')).statusCode, 200)
      const thread = (await s.app.inject({ url: `/sw/signals/${root.id}/thread` })).json().signals.map((x: { id: string }) => x.id)
      t.same(thread, [root.id, leaf.id])
      const byId = (await s.app.inject({ url: `/sw/signals/${root.id}` })).json()
      t.same(byId.replies, [], 'not among the direct replies')
    })
    t.test('works with a sw:// URI', async (t) => {
      const sig = (await s.publish({ $type: 'broadcast' })).json().signal
      t.equal((await admin('DELETE', `/signals/${encodeURIComponent(sig.uri)}`)).statusCode, 200)
      t.equal((await s.app.inject({ url: `/sw/signals/${sig.id}` })).statusCode, 404)
    })
    t.test('an unknown or malformed id is 404 not_found', async (t) => {
      for (const id of [SOME_ID, 'nope', encodeURIComponent(`sw://other.example/signals/${SOME_ID}`), '%00'])
        t.same(errorOf(await admin('DELETE', `/signals/${id}`)), { status: 404, code: 'not_found' }, id)
    })
  })

  t.test('pins', async (t) => {
    t.test('POST pins: {ok:true, signal} with pinned true; DELETE unpins', async (t) => {
      const sig = (await s.publish({ $type: 'broadcast', text: 'pin me' })).json().signal
      const pin = await admin('POST', `/signals/${sig.id}/pin`)
      t.equal(pin.statusCode, 200)
      const body = pin.json()
      t.same(Object.keys(body), ['ok', 'signal'])
      t.equal(body.ok, true)
      t.match(body.signal, { id: sig.id, pinned: true, payload: { text: 'pin me' }, createdAt: sig.createdAt, expiresAt: sig.expiresAt })
      t.equal(
        (await admin('POST', `/signals/${sig.id}/pin`, undefined, '/sw/v1/admin')).json().signal.pinned,
        true,
        'pinning twice is fine',
      )
      const unpin = await admin('DELETE', `/signals/${sig.id}/pin`)
      t.equal(unpin.statusCode, 200)
      t.match(unpin.json(), { ok: true, signal: { id: sig.id, pinned: false, expiresAt: sig.expiresAt } })
    })
    t.test('an unknown or removed signal is 404 not_found', async (t) => {
      const sig = (await s.publish({ $type: 'broadcast' })).json().signal
      await admin('DELETE', `/signals/${sig.id}`)
      for (const id of [SOME_ID, sig.id, 'x'])
        for (const method of ['POST', 'DELETE'] as const)
          t.same(errorOf(await admin(method, `/signals/${id}/pin`)), { status: 404, code: 'not_found' }, `${method} ${id}`)
    })
    t.test('works with a sw:// URI', async (t) => {
      const sig = (await s.publish({ $type: 'broadcast' })).json().signal
      t.equal((await admin('POST', `/signals/${encodeURIComponent(sig.uri)}/pin`)).json().signal.pinned, true)
    })
  })
})

/**
 * Pins, unpins and removals must show in the very next read of the feed (docs/protocol.md: removal is
 * "at once everywhere"; an unpinned expired signal "leaves the feed at once"). Run against the
 * reader's in-memory tail (the default) and against the database path (a tail of 0 sends reads to
 * SQL). Each step is repeated so a lucky race cannot pass it.
 */
for (const [label, tailSize] of [
  ['from the in-memory tail', undefined],
  ['from the database', 0],
] as const) {
  t.test(`admin changes show in the next read of the feed ${label}`, async (t) => {
    const s = await startStack(t, { overrides: tailSize === undefined ? {} : { tailSize } })
    const inFeed = async (id: string) => ((await s.read()).signals as Array<{ id: string; pinned: boolean }>).find((x) => x.id === id)

    t.test('a removed signal leaves the feed at once', async (t) => {
      for (let i = 0; i < 5; i++) {
        const sig = (await s.publish({ $type: 'broadcast', i })).json().signal
        t.ok(await inFeed(sig.id), 'in the feed before')
        await s.app.inject({ method: 'DELETE', url: `/sw/admin/signals/${sig.id}`, headers: ADMIN })
        t.notOk(await inFeed(sig.id), `removal ${i + 1} shows in the next read`)
      }
    })

    t.test('a pinned signal stays in the feed past expiresAt, and unpinning it drops it at once', async (t) => {
      for (let i = 0; i < 5; i++) {
        const sig = (await s.publish({ $type: 'broadcast', i })).json().signal
        t.ok(await inFeed(sig.id), 'in the feed before')
        await backdate(s, sig.id)
        await s.app.inject({ method: 'POST', url: `/sw/admin/signals/${sig.id}/pin`, headers: ADMIN })
        t.match(
          (await s.app.inject({ url: `/sw/signals/${sig.id}` })).json(),
          { signal: { pinned: true } },
          `pinned ${i + 1}: shown pinned by id`,
        )
        t.match(await inFeed(sig.id), { pinned: true }, `pinned ${i + 1}: in the feed past expiresAt, shown pinned`)
        await s.app.inject({ method: 'DELETE', url: `/sw/admin/signals/${sig.id}/pin`, headers: ADMIN })
        t.notOk(await inFeed(sig.id), `unpinned ${i + 1}: gone from the next read`)
        const byId = await s.app.inject({ url: `/sw/signals/${sig.id}` })
        t.match(byId.json(), { signal: { pinned: false } }, 'still served by id until swept')
      }
    })
  })
}

t.test('a reader that missed an invalidation still drops a removed or unpinned signal', async (t) => {
  const s = await startStack(t)
  // a second reader on the same database whose bus never connects (Redis at a closed port): it
  // learns of new signals by its fallback poll only, like a reader that lost its subscription
  const cfg = loadConfig({ ...envOf(s), REDIS_URL: 'redis://127.0.0.1:1', WAKE_FALLBACK_POLL_MS: '50' })
  const log = createLogger('reader', 'silent')
  const { app: reader, close } = await startReader(cfg, log)
  t.teardown(close)
  const feedOf = async () =>
    (await reader.inject({ url: '/sw/signals?includeExpired=1' })).json().signals as Array<{ id: string; pinned: boolean }>
  const removed = (await s.publish({ $type: 'broadcast', text: 'remove me' })).json().signal
  const unpinned = (await s.publish({ $type: 'broadcast', text: 'unpin me' })).json().signal
  await s.app.inject({ method: 'POST', url: `/sw/admin/signals/${unpinned.id}/pin`, headers: ADMIN })
  t.ok(
    await eventually(async () => (await feedOf()).some((x) => x.id === unpinned.id && x.pinned), 1000),
    'the second reader has both, one pinned',
  )
  await s.app.inject({ method: 'DELETE', url: `/sw/admin/signals/${removed.id}`, headers: ADMIN })
  await backdate(s, unpinned.id)
  await s.app.inject({ method: 'DELETE', url: `/sw/admin/signals/${unpinned.id}/pin`, headers: ADMIN })
  t.equal((await reader.inject({ url: `/sw/signals/${removed.id}` })).statusCode, 404, 'by id it is gone at once')
  t.ok(
    await eventually(async () => !(await feedOf()).some((x) => x.id === removed.id), 1000),
    'the removed signal leaves its feed within 1 s',
  )
  t.ok(
    await eventually(async () => !(await feedOf()).some((x) => x.id === unpinned.id && x.pinned), 1000),
    'the unpinned signal is no longer pinned in its feed within 1 s',
  )
})

t.test('the board file (WIRE_CONFIG)', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'wire-board-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const key = 'board-file-fp-secret'
  const idOf = (token: string) => fingerprint(key, token)
  const file = join(dir, 'subwire.config.json')
  writeFileSync(
    file,
    JSON.stringify({
      name: 'Seeded board',
      description: 'From the file',
      allowedSignalTypes: ['offer', 'reply'],
      allow: [idOf('allowed-agent-1'), idOf('blocked-agent-1')],
      block: [idOf('blocked-agent-1')],
    }),
  )
  const s = await startStack(t, { env: { WIRE_CONFIG: file, FINGERPRINT_SECRET: key } })
  const admin = (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: object) =>
    s.app.inject({ method, url, headers: ADMIN, ...(payload && { payload }) })
  const rulePairs = async () =>
    ((await admin('GET', '/sw/admin/rules')).json().rules as Array<{ ruleType: string; identityId: string }>)
      .map((r) => `${r.ruleType} ${r.identityId}`)
      .sort()

  t.test('seeds the name, description and types', async (t) => {
    t.match((await s.app.inject({ url: '/sw/wire' })).json(), {
      name: 'Seeded board',
      description: 'From the file',
      allowedSignalTypes: ['offer', 'reply'],
    })
    t.match((await s.app.inject({ url: '/.well-known/wire' })).json().subwires, [{ name: 'Seeded board', description: 'From the file' }])
  })

  t.test('seeds its allow and block rules, and they apply', async (t) => {
    t.same(
      await rulePairs(),
      [`allow ${idOf('allowed-agent-1')}`, `allow ${idOf('blocked-agent-1')}`, `deny ${idOf('blocked-agent-1')}`].sort(),
    )
    t.equal((await s.publish({ $type: 'offer' }, 'allowed-agent-1')).statusCode, 200)
    t.same(errorOf(await s.publish({ $type: 'offer' }, 'blocked-agent-1')), { status: 403, code: 'forbidden' }, 'blocked')
    t.same(errorOf(await s.publish({ $type: 'offer' }, 'someone-else-1')), { status: 403, code: 'forbidden' }, 'not on the allow list')
    t.same(errorOf(await s.publish({ $type: 'broadcast' }, 'allowed-agent-1')), { status: 403, code: 'forbidden' }, 'type not allowed')
  })

  t.test('a later boot upserts the file rules, keeps runtime rules, and does not re-seed the metadata', async (t) => {
    t.equal((await admin('POST', '/sw/admin/rules', { ruleType: 'allow', identityId: idOf('runtime-agent-1') })).statusCode, 201)
    writeFileSync(
      file,
      JSON.stringify({
        name: 'Renamed in the file',
        description: 'Changed in the file',
        allowedSignalTypes: ['broadcast'],
        allow: [idOf('allowed-agent-1'), idOf('allowed-agent-2')],
        block: [idOf('blocked-agent-1'), idOf('blocked-agent-2')],
      }),
    )
    const log = createLogger('writer', 'silent')
    const second = await writerOn({ ...s.cfg, boardFile: file }, log, s.infra)
    await second.close()
    t.same(
      await rulePairs(),
      [
        `allow ${idOf('allowed-agent-1')}`,
        `allow ${idOf('allowed-agent-2')}`,
        `allow ${idOf('blocked-agent-1')}`,
        `allow ${idOf('runtime-agent-1')}`,
        `deny ${idOf('blocked-agent-1')}`,
        `deny ${idOf('blocked-agent-2')}`,
      ].sort(),
    )
    t.match(
      (await s.app.inject({ url: '/sw/wire' })).json(),
      { name: 'Seeded board', description: 'From the file', allowedSignalTypes: ['offer', 'reply'] },
      'the database stays the source of truth',
    )
  })

  t.test('an invalid board file stops the boot', async (t) => {
    const bad = join(dir, 'bad.json')
    writeFileSync(bad, JSON.stringify({ name: 'x', channels: ['a'] }))
    await t.rejects(writerOn({ ...s.cfg, boardFile: bad }, createLogger('writer', 'silent'), s.infra), { name: 'ConfigError' })
    writeFileSync(bad, '{ not json')
    await t.rejects(writerOn({ ...s.cfg, boardFile: bad }, createLogger('writer', 'silent'), s.infra), { name: 'ConfigError' })
  })
})

t.test('with no board file the board is named main', async (t) => {
  const s = await startStack(t, { env: { WIRE_CONFIG: join(tmpdir(), 'no-such-dir-wire', 'subwire.config.json') } })
  t.match((await s.app.inject({ url: '/sw/wire' })).json(), { name: 'main', description: null, allowedSignalTypes: null })
  t.same((await s.app.inject({ url: '/sw/admin/rules', headers: ADMIN })).json(), { rules: [] })
})
