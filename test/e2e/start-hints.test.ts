import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { projectPath } from '../../libs/shared/paths.js'
import { freePort, startProcess } from '../helpers/process.js'

// What a newcomer sees when a start cannot work: one line naming the fix, exit code 1, no stack
// trace. Real child processes on the built server (scripts/build.mjs skips the build when current).

execFileSync(process.execPath, [projectPath('scripts/build.mjs')], { stdio: 'inherit' })

// its processes each make an embedded database and stop, ~11 s each on a quiet machine: together
// longer than tap's 120 s per file on a loaded or slower one (85-120 s at load 6-7)
t.setTimeout(480_000)

const env = (port: number, dataDir: string) => {
  const e: Record<string, string | undefined> = {
    ...process.env,
    SERVER_PORT: String(port),
    SERVER_HOST: '127.0.0.1',
    WIRE_DATA_DIR: dataDir,
    LOG_LEVEL: 'info',
    WIRE_CONFIG: '/nonexistent/board.json',
  }
  for (const k of ['DATABASE_URL', 'REDIS_URL', 'IDENTITY_URL']) delete e[k]
  return e
}
const server = (port: number, dataDir: string, ready: RegExp) =>
  startProcess(t, process.execPath, [projectPath('dist/apps/server/main.js')], env(port, dataDir), ready)

const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'wire-hints-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

t.test('a busy port: one line naming SERVER_PORT, exit 1, no stack trace', async (t) => {
  const port = await freePort()
  const squatter = createServer().listen(port, '127.0.0.1')
  t.teardown(() => squatter.close())
  await new Promise((r) => squatter.once('listening', r))
  const p = await server(port, join(tempDir(), 'data'), /already in use/)
  const end = await p.exited
  t.equal(end.code, 1, 'exit code 1')
  const line = p
    .output()
    .split('\n')
    .find((l) => l.includes('already in use'))!
  t.match(line, new RegExp(`^wire: port ${port} on 127\\.0\\.0\\.1 is already in use: .*set SERVER_PORT to a free port$`))
  t.notMatch(p.output(), /\n\s+at /, 'no stack trace')
  t.notMatch(p.output(), /"level":60/, 'no fatal log line')
})

t.test('a second process on the same embedded database directory stops with a one-line hint', async (t) => {
  const dir = join(tempDir(), 'data')
  const first = await server(await freePort(), dir, /is live at/)
  const second = await server(await freePort(), dir, /is in use by process/)
  const end = await second.exited
  t.equal(end.code, 1, 'the second exits 1')
  t.match(
    second.output(),
    new RegExp(`^wire: the embedded database in ${dir} is in use by process ${first.child.pid}: .*WIRE_DATA_DIR`, 'm'),
  )
  t.notMatch(second.output(), /\n\s+at /, 'no stack trace')

  first.signal('SIGTERM')
  await first.exited
  const third = await server(await freePort(), dir, /is live at/)
  t.pass('once the first has stopped, the directory is free again')
  third.signal('SIGKILL') // a crash leaves the lock file behind …
  await third.exited
  const fourth = await server(await freePort(), dir, /is live at/)
  t.pass('… and a lock whose process is gone is taken over')
  fourth.signal('SIGTERM')
  t.equal((await fourth.exited).code, 0)
})
