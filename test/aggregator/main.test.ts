import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { projectPath } from '../../libs/shared/paths.js'
import { freePort, startProcess } from '../helpers/process.js'
import { assertServicesUp, dropSchema, TEST_DATABASE_URL, uniqueSchema } from '../helpers/services.js'

// `npm run start:aggregator` runs dist/apps/aggregator/main.js: it listens, answers its probes, and
// stops cleanly on SIGTERM, on PostgreSQL or, for a trial, the embedded database. (Run `npm run build` first; npm test does.)

t.test('the aggregator process starts, is ready, and stops on SIGTERM with exit code 0', async (t) => {
  await assertServicesUp()
  const schema = uniqueSchema('aggmain')
  t.teardown(() => dropSchema(schema))
  const port = await freePort()
  const env = {
    ...process.env,
    DATABASE_URL: TEST_DATABASE_URL,
    AGGREGATOR_PG_SCHEMA: schema,
    SERVER_PORT: String(port),
    SERVER_HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
  }
  const proc = await startProcess(t, process.execPath, [projectPath('dist/apps/aggregator/main.js')], env, /"listening"/)
  const url = `http://127.0.0.1:${port}`
  t.equal((await fetch(`${url}/readyz`)).status, 200, 'ready')
  t.match(await (await fetch(`${url}/.well-known/wire-aggregator`)).json(), { role: 'aggregator' })
  t.match(proc.output(), /"app":"aggregator"/, 'logs as the aggregator')
  proc.signal('SIGTERM')
  t.same(await proc.exited, { code: 0, signal: null }, 'a clean stop')
})

t.test(
  'the aggregator tunes itself as a read side: its young generation capped, and the memory of a burst given back once quiet',
  async (t) => {
    await assertServicesUp()
    const schema = uniqueSchema('aggtune')
    t.teardown(() => dropSchema(schema))
    const port = await freePort()
    const env = {
      ...process.env,
      DATABASE_URL: TEST_DATABASE_URL,
      AGGREGATOR_PG_SCHEMA: schema,
      SERVER_PORT: String(port),
      SERVER_HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      READER_SEMI_SPACE_MB: '2',
      IDLE_GC_INTERVAL_MS: '1000',
    }
    const proc = await startProcess(t, process.execPath, [projectPath('dist/apps/aggregator/main.js')], env, /"listening"/)
    const url = `http://127.0.0.1:${port}`
    t.ok(
      readFileSync(`/proc/${proc.child.pid}/cmdline`, 'utf8').split('\0').includes('--max-semi-space-size=2'),
      'it runs itself again, same pid, with READER_SEMI_SPACE_MB',
    )
    const idleGcs = async () => Number(/^wire_idle_gc_total (\d+)/m.exec(await (await fetch(`${url}/metrics`)).text())?.[1])
    // looked at every 200 ms, not on every turn: scrapes that close together would keep it from ever being quiet
    let collected = false
    for (const end = Date.now() + 15_000; !collected && Date.now() < end; ) {
      collected = (await idleGcs()) >= 1
      if (!collected) await new Promise((r) => setTimeout(r, 200))
    }
    t.ok(collected, 'and makes its memory-reducing collection once quiet after its start (IDLE_GC_INTERVAL_MS)')
    proc.signal('SIGTERM')
    t.same(await proc.exited, { code: 0, signal: null }, 'a clean stop')
  },
)

t.test('without DATABASE_URL it runs on the embedded database in WIRE_DATA_DIR, for a trial', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'wire-aggregator-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const port = await freePort()
  const env = {
    ...process.env,
    DATABASE_URL: '',
    REDIS_URL: '',
    WIRE_DATA_DIR: dir,
    SERVER_HOST: '127.0.0.1',
    SERVER_PORT: String(port),
    LOG_LEVEL: 'info',
  }
  // PGlite's first start (initdb in WebAssembly) is slow on a busy machine
  const proc = await startProcess(t, process.execPath, [projectPath('dist/apps/aggregator/main.js')], env, /"msg":"listening"/, 110_000)
  t.match(proc.output(), /"schema":"aggregator".*"msg":"migrations checked"/, 'its schema in the embedded database')
  t.same(await (await fetch(`http://127.0.0.1:${port}/registry/boards`)).json(), { boards: [], nextCursor: 0 }, 'serves its registry')
  proc.signal('SIGTERM')
  t.same(await proc.exited, { code: 0, signal: null }, 'a clean stop')
})

t.test('a database it cannot use is one line naming DATABASE_URL, not a stack trace', async (t) => {
  const port = await freePort()
  for (const [what, url, extra] of [
    ['a URL naming no user', 'postgres://127.0.0.1:5432/test', { USER: '', PGUSER: '' }],
    ['nothing listening', `postgres://wire:secret-pw@127.0.0.1:${await freePort()}/test`, {}],
  ] as const) {
    const env = { ...process.env, DATABASE_URL: url, SERVER_PORT: String(port), LOG_LEVEL: 'info', ...extra }
    const proc = await startProcess(t, process.execPath, [projectPath('dist/apps/aggregator/main.js')], env, /DATABASE_URL/)
    t.not((await proc.exited).code, 0, `${what}: exits non-zero`)
    const lines = proc.output().trim().split('\n')
    t.equal(lines.length, 1, `${what}: one line`)
    t.match(lines[0], /^wire: .*DATABASE_URL/, `${what}: names DATABASE_URL`)
    t.notMatch(proc.output(), /"stack"| {4}at /, 'no stack trace')
    t.notMatch(proc.output(), /secret-pw/, 'and never the password')
  }
})
