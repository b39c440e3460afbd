import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { projectPath } from '../../libs/shared/paths.js'
import { freePort, startProcess } from '../helpers/process.js'
import { assertServicesUp, dropSchema, TEST_DATABASE_URL, TEST_REDIS_URL, uniqueSchema } from '../helpers/services.js'

// `npm start` with WIRE_NETWORK_BOARDS=2: a whole network in one process (the identity network,
// two boards in network mode, an aggregator) on one embedded database, and on PostgreSQL and
// Redis. A real child process, real HTTP between its roles and from here.

// a first start creates the embedded database (from its template; by initdb where none fits): seconds
// on a quiet machine, past 200 s beside the suite's other embedded databases in CI (2026-11-29)
t.setTimeout(900_000)

/** The first of `n` consecutive free ports on 127.0.0.1. */
async function freeRun(n: number): Promise<number> {
  const taken = (port: number) =>
    new Promise<boolean>((resolve) => {
      const s = createServer().once('error', () => resolve(true))
      s.listen(port, '127.0.0.1', () => s.close(() => resolve(false)))
    })
  for (;;) {
    const first = await freePort()
    let ok = first + n - 1 <= 65535
    for (let p = first + 1; ok && p < first + n; p++) ok = !(await taken(p))
    if (ok) return first
  }
}

async function call(url: string, o: { token?: string; body?: unknown } = {}) {
  const res = await fetch(url, {
    method: o.body === undefined ? 'GET' : 'POST',
    headers: {
      ...(o.token && { authorization: `Bearer ${o.token}` }),
      ...(o.body !== undefined && { 'content-type': 'application/json' }),
    },
    ...(o.body !== undefined && { body: JSON.stringify(o.body) }),
  })
  return { status: res.status, body: (await res.json()) as any }
}

interface Net {
  env: Record<string, string | undefined>
  ports: { a: number; b: number; agg: number; idn: number }
  urls: { a: string; b: string; agg: string; idn: string }
  start(): ReturnType<typeof startProcess>
}

/** `node dist/apps/server/main.js` with WIRE_NETWORK_BOARDS=2 on free ports, `extra` on top of this environment. */
async function network(t: Test, extra: Record<string, string>): Promise<Net> {
  const ports = { a: await freeRun(2), b: 0, agg: await freePort(), idn: await freePort() }
  ports.b = ports.a + 1
  const env: Record<string, string | undefined> = {
    ...process.env,
    WIRE_NETWORK_BOARDS: '2',
    SERVER_HOST: '127.0.0.1',
    SERVER_PORT: String(ports.a),
    WIRE_NETWORK_AGGREGATOR_PORT: String(ports.agg),
    WIRE_NETWORK_IDENTITY_PORT: String(ports.idn),
    WIRE_CONFIG: '/nonexistent/board.json',
    SHED_EVENT_LOOP_DELAY_MS: '0',
    LOG_LEVEL: 'info',
  }
  for (const k of ['DATABASE_URL', 'REDIS_URL', 'IDENTITY_URL', 'AGGREGATOR_URL', 'PUBLIC_WIRE_HOST', 'PUBLIC_WIRE_URL', 'NODE_OPTIONS'])
    delete env[k]
  Object.assign(env, extra)
  const url = (p: number) => `http://localhost:${p}`
  const start = () =>
    startProcess(
      t,
      projectPath('node_modules/.bin/node'),
      [projectPath('dist/apps/server/main.js')],
      env,
      /is live in this process[\s\S]*Try it[\s\S]*search\/signals/,
      480_000,
    )
  return { env, ports, urls: { a: url(ports.a), b: url(ports.b), agg: url(ports.agg), idn: url(ports.idn) }, start }
}

/** One identity registers, publishes on both boards (each verifying with the identity network over HTTP), and the aggregator's search finds both. */
async function oneIdentityBothBoards(t: Test, { ports, urls }: Net) {
  const agent = (await call(`${urls.idn}/identity/register`, { body: { displayName: 'Roamer' } })).body
  t.match(agent, { identityId: /^id_/, token: /^wim_/ })
  const onA = await call(`${urls.a}/sw/signals`, {
    token: agent.token,
    body: { $type: 'broadcast', $tags: ['roam'], text: 'roaming on a' },
  })
  const onB = await call(`${urls.b}/sw/signals`, {
    token: agent.token,
    body: { $type: 'broadcast', $tags: ['roam'], text: 'roaming on b' },
  })
  const origin = {
    origin: agent.identityId,
    originName: 'Roamer',
    originVerified: false,
    originUri: `sw://localhost:${ports.idn}/identities/${agent.identityId}`,
  }
  t.match([onA.status, onA.body.signal], [200, origin], 'board A: the network identity')
  t.match([onB.status, onB.body.signal], [200, origin], 'board B: the same identity')
  t.equal(
    (await call(`${urls.a}/sw/signals`, { token: 'wim_not-a-token-of-this-network', body: { $type: 'broadcast' } })).status,
    401,
    'a token the network does not know is refused',
  )
  // a search that waits until both are indexed
  const found: Array<{ board: string; payload: { text: string } }> = []
  for (let cursor = 0; found.length < 2; ) {
    const page = await call(`${urls.agg}/search/signals?tag=roam&cursor=${cursor}&wait=20`)
    if (page.status !== 200 || page.body.signals.length === 0) break // the wait ended with nothing new: the assertion below says so
    found.push(...page.body.signals)
    cursor = page.body.nextCursor
  }
  t.same(
    found.map((s) => [s.board, s.payload.text]).sort(),
    [
      [`localhost:${ports.a}`, 'roaming on a'],
      [`localhost:${ports.b}`, 'roaming on b'],
    ],
    'the aggregator’s search finds both boards’ signals',
  )
  return { agent, onA: onA.body.signal, onB: onB.body.signal }
}

t.test(
  'one process runs the network: one identity publishes on both boards, the aggregator finds both; it stops cleanly and keeps its data',
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'wire-network-'))
    t.teardown(() => rmSync(dir, { recursive: true, force: true }))
    const net = await network(t, { WIRE_DATA_DIR: join(dir, 'data') })
    const { ports, urls } = net

    let proc = await net.start()
    const banner = proc.output()
    for (const [what, url] of [
      ['identity network', urls.idn],
      ['aggregator', urls.agg],
      ['board-a', urls.a],
      ['board-b', urls.b],
    ])
      t.match(banner, new RegExp(`\\n {4}${what} +${url}`), `the banner names the ${what} at ${url}`)

    // the banner's three lines, run as printed: register, publish on board A, search through the aggregator
    const tryIt = /Try it:.*\n.*\n((?: {4}.*\n){3})/.exec(banner)?.[1]
    t.ok(tryIt, 'three lines to try it')
    const shell = spawnSync('bash', ['-euo', 'pipefail', '-c', tryIt!], { encoding: 'utf8', timeout: 60_000 })
    t.equal(shell.status, 0, 'they run', { stderr: shell.stderr })
    t.match(
      shell.stdout,
      /^\{"ok":true,"signal":\{.*"originName":"my-agent".*\n?\{"signals":\[\{.*"text":"hi, network".*"board":"localhost:\d+"/s,
      'the publish, then the search finds it',
    )

    const { agent, onA, onB } = await oneIdentityBothBoards(t, net)
    const proxied = await call(`${urls.agg}/sw/localhost:${ports.b}/sw/signals/${onB.id}`)
    t.equal(proxied.body.signal?.payload?.text, 'roaming on b', 'the aggregator proxies a read of board B')

    proc.signal('SIGTERM')
    t.same(await proc.exited, { code: 0, signal: null }, 'SIGTERM: exit 0')
    t.match(proc.output(), /"msg":"stopped"/)
    t.notMatch(proc.output(), /"level":[56]0/, 'no error logged')

    // a restart: the same database, with every schema's data
    proc = await net.start()
    t.equal((await call(`${urls.a}/sw/signals/${onA.id}`)).body.signal?.origin, agent.identityId, 'board A kept its signal')
    t.same(
      (await call(`${urls.agg}/registry/boards`)).body.boards.map((x: { authority: string }) => x.authority).sort(),
      [`localhost:${ports.a}`, `localhost:${ports.b}`],
      'the aggregator kept both boards',
    )
    t.equal(
      (await call(`${urls.b}/sw/signals`, { token: agent.token, body: { $type: 'reply', $refId: onB.id, text: 'back' } })).status,
      200,
      'the identity network kept the identity',
    )
    proc.signal('SIGTERM')
    t.same(await proc.exited, { code: 0, signal: null }, 'and stops cleanly again')

    // the aggregator's port taken: the roles started before it close, and one line names its setting
    const squatter = createServer()
    await new Promise<void>((r) => squatter.listen(ports.agg, '127.0.0.1', r))
    t.teardown(() => void squatter.close())
    const refused = await startProcess(
      t,
      projectPath('node_modules/.bin/node'),
      [projectPath('dist/apps/server/main.js')],
      net.env,
      /already in use/,
      60_000,
    )
    t.same(await refused.exited, { code: 1, signal: null }, 'exits 1')
    t.match(
      refused.output(),
      new RegExp(`\\nwire: port ${ports.agg} on 127\\.0\\.0\\.1 is already in use: .*set WIRE_NETWORK_AGGREGATOR_PORT to a free port\\n`),
      'naming WIRE_NETWORK_AGGREGATOR_PORT',
    )
    t.equal(refused.output().match(/"msg":"sweeper stopped"/g)?.length, 2, 'after closing both boards it had started')
  },
)

t.test('on PostgreSQL and Redis, the same network: every role in its schema', async (t) => {
  await assertServicesUp()
  const s = uniqueSchema('nw')
  t.teardown(async () => {
    for (const x of [`${s}_a`, `${s}_b`, `${s}_idn`, `${s}_agg`]) await dropSchema(x) // and each one's pg-boss schema
  })
  const net = await network(t, {
    DATABASE_URL: TEST_DATABASE_URL,
    REDIS_URL: TEST_REDIS_URL,
    WIRE_PG_SCHEMA: s,
    IDENTITY_PG_SCHEMA: `${s}_idn`,
    AGGREGATOR_PG_SCHEMA: `${s}_agg`,
  })
  const proc = await net.start()
  t.match(proc.output(), /is live in this process {2}\(PostgreSQL;/)
  await oneIdentityBothBoards(t, net)
  proc.signal('SIGTERM')
  t.same(await proc.exited, { code: 0, signal: null }, 'SIGTERM: exit 0')
  t.notMatch(proc.output(), /"level":[56]0/, 'no error logged')
})
