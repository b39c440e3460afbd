import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { dropSchema, TEST_DATABASE_URL, TEST_REDIS_URL, uniqueSchema } from '../helpers/services.js'
import { freePort, startProcess } from '../helpers/process.js'
import { until } from '../helpers/wait.js'

// `npm start` as a newcomer runs it: a real child process, real HTTP. Run once on the embedded
// default (PGlite in a temp directory, in-process bus) and once on this machine's PostgreSQL + Redis.

// a first start makes the embedded database: 2-10 s on a quiet machine, past 90 s beside the suite's
// other embedded databases on a loaded one (CI, 2026-11-29)
t.setTimeout(600_000)

const baseEnv = () => {
  const env: Record<string, string | undefined> = { ...process.env, LOG_LEVEL: 'info', WIRE_CONFIG: '/nonexistent/board.json' }
  for (const k of ['DATABASE_URL', 'REDIS_URL', 'DATABASE_REPLICA_URL', 'IDENTITY_URL', 'SERVER_ADMIN_TOKEN']) delete env[k]
  return env
}

async function startAndStopTwice(t: Test, env: Record<string, string | undefined>) {
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  const run = () => startProcess(t, 'npm', ['start'], { ...env, SERVER_PORT: String(port) }, /is live at/)
  const json = async (path: string, init?: RequestInit) => (await fetch(url + path, init)).json() as Promise<any>

  const first = await run()
  t.match(first.output(), /curl -s -X POST http:\/\/localhost:\d+\/sw\/signals/, 'prints a ready-to-paste publish example')
  t.match(first.output(), /Watch it live in a browser: http:\/\/localhost:\d+\/view\n/, 'and the viewer address')
  const view = await fetch(`${url}/view`)
  t.match({ status: view.status, type: view.headers.get('content-type') }, { status: 200, type: /^text\/html/ }, 'which serves the page')
  t.equal((await fetch(`${url}/view/client/client/src/index.js`)).status, 200, 'and the client library it runs (built by npm start)')
  const pub = await json('/sw/signals', {
    method: 'POST',
    headers: { authorization: 'Bearer newcomer-token', 'content-type': 'application/json' },
    body: JSON.stringify({ $type: 'broadcast', $tags: ['hello'], text: 'hi, wire' }),
  })
  t.equal(pub.ok, true, 'publish over HTTP')
  const page = await json('/sw/signals')
  t.equal(page.signals.length, 1)
  t.equal(page.signals[0].id, pub.signal.id, 'read it back')

  // Ctrl-C while a long-poll waits: the poll is answered, then the process exits 0
  const poll = json(`/sw/signals?cursor=${page.nextCursor}&wait=20`)
  await until(async () => (await json('/readyz')).waiting === 1, 10_000, 'the long-poll to wait')
  const t0 = Date.now()
  first.signal('SIGINT')
  const answered = await poll
  t.same(answered.signals, [], 'the waiting long-poll is answered on shutdown')
  t.equal(answered.nextCursor, page.nextCursor, 'with its cursor')
  // npm itself dies of the Ctrl-C; the server's own "stopped" line (after the database closed) says it stopped cleanly
  const end1 = await first.exited
  t.ok(end1.code === 0 || end1.signal === 'SIGINT', `npm ended by Ctrl-C (${JSON.stringify(end1)})`)
  t.match(first.output(), /"msg":"stopped"/, 'the server stopped cleanly')
  t.notMatch(first.output(), /"level":[56]0/, 'and logged no error')
  t.ok(Date.now() - t0 < 10_000, `stopped in ${Date.now() - t0} ms`)

  const second = await run()
  const again = await json(`/sw/signals/${pub.signal.id}`)
  t.equal(again.signal?.payload?.text, 'hi, wire', 'a restart keeps the data')
  t.equal((await json('/sw/signals')).nextCursor, page.nextCursor, 'and the feed head')
  second.signal('SIGTERM')
  const end2 = await second.exited
  t.ok(end2.code === 0 || end2.signal === 'SIGTERM', `SIGTERM stops it (${JSON.stringify(end2)})`)
  t.match(second.output(), /"msg":"stopped"/, 'cleanly')
}

t.test('npm start on the embedded default keeps data across restarts', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'wire-embedded-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  await startAndStopTwice(t, { ...baseEnv(), WIRE_DATA_DIR: join(dir, 'data') })
})

t.test('npm start on PostgreSQL and Redis behaves the same', async (t) => {
  const schema = uniqueSchema('npm')
  t.teardown(() => dropSchema(schema))
  await startAndStopTwice(t, { ...baseEnv(), DATABASE_URL: TEST_DATABASE_URL, REDIS_URL: TEST_REDIS_URL, WIRE_PG_SCHEMA: schema })
})
