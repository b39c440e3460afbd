import t from 'tap'
import { projectPath } from '../../libs/shared/paths.js'
import { NODE } from '../cli/run.js'
import { run, userEnv } from '../packages/packed.js'

// libs/shared/database-hint.ts: a DATABASE_URL that points at nothing usable stops every start with one line naming the host and
// the database and what to do (as `wire migrate` does), never a fatal log line with a stack.
// Real processes against this machine's PostgreSQL; no database of that name is ever created.

const BIN = projectPath('dist/apps/server/wire-server.js')
const MISSING = `wire_missing_${process.pid}`

/** The environment of a shell without $USER (a container, a systemd unit), plus `extra`. */
const noUser = (extra: Record<string, string>) => {
  const env: Record<string, string> = userEnv({ WIRE_CONFIG: '/nonexistent/board.json', SERVER_PORT: '0', LOG_LEVEL: 'info', ...extra })
  delete env.USER
  return env
}

t.test('a missing database: one line with createdb, at every role’s start', async (t) => {
  for (const args of [
    [],
    ['--role', 'writer'],
    ['--role', 'reader'],
    ['--role', 'agents'],
    ['--role', 'sweeper'],
    ['--role', 'aggregator'],
  ]) {
    const r = await run(NODE, [BIN, ...args], projectPath(), noUser({ DATABASE_URL: `postgres://root@127.0.0.1:5432/${MISSING}` }), 60_000)
    const what = `wire-server ${args.join(' ')}`.trim()
    t.equal(r.code, 1, `${what} exits 1`)
    t.equal(
      r.err,
      `wire: database "${MISSING}" does not exist on 127.0.0.1:5432 (DATABASE_URL): create it with \`createdb -h 127.0.0.1 -p 5432 -U root ${MISSING}\`, or set DATABASE_URL to one that exists\n`,
      `${what}: one line on stderr`,
    )
    t.notMatch(r.out, /"level":60|stack/, 'and no fatal log with a stack')
  }
})

t.test('a URL without a user where $USER is unset: one line asking for one', async (t) => {
  const r = await run(NODE, [BIN], projectPath(), noUser({ DATABASE_URL: 'postgres://127.0.0.1:5432/test' }), 60_000)
  t.equal(r.code, 1)
  t.match(
    r.err,
    /^wire: DATABASE_URL \(127\.0\.0\.1:5432\/test\) names no user and PostgreSQL refused the connection \(.*\): put one in it, as in postgres:\/\/USER:PASSWORD@127\.0\.0\.1:5432\/test\n$/,
  )
  t.notMatch(r.out, /"level":60/)
})

t.test('nothing listening: one line naming host and database', async (t) => {
  const r = await run(NODE, [BIN, '--role', 'writer'], projectPath(), noUser({ DATABASE_URL: 'postgres://root@127.0.0.1:1/wire' }), 60_000)
  t.equal(r.code, 1)
  t.equal(
    r.err,
    'wire: cannot reach PostgreSQL at 127.0.0.1:1 for database "wire" (ECONNREFUSED): is it running, and is the host in DATABASE_URL right?\n',
  )
})

t.test('wire migrate says the same', async (t) => {
  const r = await run(
    NODE,
    [projectPath('dist/apps/cli/main.js'), 'migrate'],
    projectPath(),
    noUser({ DATABASE_URL: `postgres://root@127.0.0.1:5432/${MISSING}` }),
    60_000,
  )
  t.equal(r.code, 1)
  t.match(
    r.err,
    new RegExp(
      `^wire: cannot migrate schema public of 127\\.0\\.0\\.1:5432/${MISSING}: database "${MISSING}" does not exist on 127\\.0\\.0\\.1:5432 \\(DATABASE_URL\\): create it with \`createdb -h 127\\.0\\.0\\.1 -p 5432 -U root ${MISSING}\``,
    ),
  )
})
