import t from 'tap'
import { projectPath } from '../../libs/shared/paths.js'
import { NODE } from '../cli/run.js'
import { freePort, startProcess } from '../helpers/process.js'
import { dropSchema, TEST_DATABASE_URL, uniqueSchema } from '../helpers/services.js'
import { REPO, run, userEnv } from './packed.js'

// `wire-server`, the server package's bin: `--role` picks one role's main from a table, anything
// else is refused with the list. Built output, real processes, this machine's PostgreSQL.

const BIN = projectPath('dist/apps/server/wire-server.js')

t.test('--help lists every role; an unknown role or option is refused with exit 2', async (t) => {
  const help = await run(NODE, [BIN, '--help'], REPO, userEnv())
  t.equal(help.code, 0)
  for (const role of ['writer', 'reader', 'agents', 'sweeper', 'aggregator', 'identity'])
    t.match(help.out, new RegExp(`--role ${role} +\\S`), `lists ${role}`)
  const unknown = await run(NODE, [BIN, '--role', 'gateway'], REPO, userEnv())
  t.same(
    [unknown.code, unknown.err],
    [2, 'wire-server: unknown role "gateway"; the roles are writer, reader, agents, sweeper, aggregator, identity\n'],
  )
  const typo = await run(NODE, [BIN, '--rol', 'writer'], REPO, userEnv())
  t.equal(typo.code, 2, 'a misspelt option')
  t.match(typo.err, /^wire-server: Unknown option '--rol'/)
})

t.test('--role writer and --role reader run those roles, which share the board', async (t) => {
  const schema = uniqueSchema('roles')
  t.teardown(() => dropSchema(schema))
  const env = userEnv({
    DATABASE_URL: TEST_DATABASE_URL,
    WIRE_PG_SCHEMA: schema,
    PUBLIC_WIRE_HOST: 'localhost:4000',
    WIRE_CONFIG: '/nonexistent/board.json',
    LOG_LEVEL: 'info',
  })
  const role = async (name: string) => {
    const port = await freePort()
    const proc = await startProcess(t, NODE, [BIN, '--role', name], { ...env, SERVER_PORT: String(port) }, /"msg":"listening"/, 60_000)
    t.match(proc.output(), `"app":"${name}"`, `--role ${name} starts the ${name}`)
    return { proc, url: `http://127.0.0.1:${port}` }
  }
  const writer = await role('writer')
  const published = await fetch(`${writer.url}/sw/signals`, {
    method: 'POST',
    headers: { authorization: 'Bearer role-test-token', 'content-type': 'application/json' },
    body: JSON.stringify({ $type: 'broadcast', text: 'through the writer' }),
  })
  t.equal(published.status, 200, 'the writer takes a publish')
  const read = await fetch(`${writer.url}/sw/signals`)
  t.match(
    { status: read.status, body: await read.json() },
    { status: 405, body: { error: { code: String } } },
    'and serves no reads (GET is not a writer route)',
  )
  const reader = await role('reader')
  const page = (await (await fetch(`${reader.url}/sw/signals`)).json()) as { signals: { payload: { text: string } }[] }
  t.same(
    page.signals.map((s) => s.payload.text),
    ['through the writer'],
    'the reader reads it',
  )
  for (const p of [writer.proc, reader.proc]) p.signal('SIGTERM')
  await Promise.all([writer.proc.exited, reader.proc.exited])
})
