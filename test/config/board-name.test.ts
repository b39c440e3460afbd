import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { loadConfig } from '../../libs/shared/config/index.js'
import { projectPath } from '../../libs/shared/paths.js'
import { NODE } from '../cli/run.js'
import { freePort, startProcess } from '../helpers/process.js'
import { dropSchema, TEST_DATABASE_URL, uniqueSchema } from '../helpers/services.js'

// WIRE_BOARD_NAME names a board that no board file names, so two boards are not both "main" in an
// aggregator's list. Like the file, it names a board once: never over the admin's name or the file's.
// The real single process on this machine's PostgreSQL, a schema of its own.

const ADMIN = 'board-name-admin-token-0123'

async function boardName(
  t: Test,
  schema: string,
  extra: Record<string, string>,
  patch?: string,
): Promise<{ wire: string; discovery: string }> {
  const port = await freePort()
  const env = {
    ...process.env,
    DATABASE_URL: TEST_DATABASE_URL,
    WIRE_PG_SCHEMA: schema,
    SERVER_PORT: String(port),
    SERVER_ADMIN_TOKEN: ADMIN,
    WIRE_CONFIG: '/nonexistent/board.json',
    LOG_LEVEL: 'warn',
    ...extra,
  }
  const p = await startProcess(t, NODE, [projectPath('dist/apps/server/main.js')], env, /is live at/, 60_000)
  const url = `http://127.0.0.1:${port}`
  if (patch) {
    const r = await fetch(`${url}/sw/admin/wire`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: patch }),
    })
    t.equal(r.status, 200, `the admin names it ${patch}`)
  }
  const wire = ((await (await fetch(`${url}/sw/wire`)).json()) as { name: string }).name
  const discovery = ((await (await fetch(`${url}/.well-known/wire`)).json()) as { subwires: { name: string }[] }).subwires[0]!.name
  p.signal('SIGTERM')
  await p.exited
  return { wire, discovery }
}

t.test('the setting is validated like the file’s name', async (t) => {
  t.equal(loadConfig({}).boardName, undefined)
  t.equal(loadConfig({ WIRE_BOARD_NAME: '  gpu-lab ' }).boardName, 'gpu-lab')
  t.throws(() => loadConfig({ WIRE_BOARD_NAME: 'x'.repeat(129) }), /WIRE_BOARD_NAME/)
  t.throws(() => loadConfig({ WIRE_BOARD_NAME: '   ' }), /WIRE_BOARD_NAME/)
})

t.test('WIRE_BOARD_NAME names a new board; a board file’s name wins; the admin’s name stays', async (t) => {
  const a = uniqueSchema('bname')
  const b = uniqueSchema('bname')
  t.teardown(async () => Promise.all([dropSchema(a), dropSchema(b)]))
  t.same(await boardName(t, a, {}), { wire: 'main', discovery: 'main' }, 'unset: "main", as before')
  t.same(
    await boardName(t, a, { WIRE_BOARD_NAME: 'gpu-lab' }),
    { wire: 'gpu-lab', discovery: 'gpu-lab' },
    'a board never named takes the setting',
  )
  t.same(
    await boardName(t, a, { WIRE_BOARD_NAME: 'renamed' }),
    { wire: 'gpu-lab', discovery: 'gpu-lab' },
    'once: a later value does not rename it',
  )

  const dir = mkdtempSync(join(tmpdir(), 'wire-board-name-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'board.json')
  writeFileSync(file, JSON.stringify({ name: 'from-the-file', description: 'd' }))
  t.same(
    await boardName(t, b, { WIRE_BOARD_NAME: 'from-the-setting', WIRE_CONFIG: file }),
    { wire: 'from-the-file', discovery: 'from-the-file' },
    'the file names it',
  )

  const c = uniqueSchema('bname')
  t.teardown(() => dropSchema(c))
  t.same(await boardName(t, c, {}, 'the-admins'), { wire: 'the-admins', discovery: 'the-admins' })
  t.same(
    await boardName(t, c, { WIRE_BOARD_NAME: 'from-the-setting' }),
    { wire: 'the-admins', discovery: 'the-admins' },
    'never over the admin’s name',
  )
})
