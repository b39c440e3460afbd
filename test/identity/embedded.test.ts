import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { projectPath } from '../../libs/shared/paths.js'
import { freePort, startProcess } from '../helpers/process.js'

// A trial identity network on the embedded database: no DATABASE_URL, one process, WIRE_DATA_DIR.
// PGlite's first start (initdb in WebAssembly) is slow on a busy machine: two starts get ten minutes.
t.setTimeout(600_000)

t.test('the identity network runs on the embedded database, and keeps its key and identities across a restart', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'wire-identity-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/tmp',
    WIRE_DATA_DIR: dir,
    SERVER_HOST: '127.0.0.1',
    SERVER_PORT: String(port),
    LOG_LEVEL: 'info',
  }
  const start = () =>
    startProcess(t, projectPath('node_modules/.bin/node'), [projectPath('dist/apps/identity/main.js')], env, /"msg":"listening"/, 240_000)
  const post = async (path: string, body: unknown, token?: string) => {
    const res = await fetch(url + path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token && { authorization: `Bearer ${token}` }) },
      body: JSON.stringify(body),
    })
    return { status: res.status, body: (await res.json()) as any }
  }
  let proc = await start()
  const a = (await post('/identity/register', { displayName: 'Trial' })).body
  const b = (await post('/identity/register', {})).body
  t.match(a, { identityId: /^id_/, token: /^wim_/, bits: 10 })
  const sent = await post('/bits/transfer', { to: b.identityId, amount: 3 }, a.token)
  t.same(sent.body, { ok: true, from: a.identityId, to: b.identityId, amount: 3, memo: '', balance: 7 })
  proc.signal('SIGTERM')
  t.equal((await proc.exited).code, 0, 'stops cleanly')
  proc = await start()
  const v = await post('/identity/verify', { authority: 'board.example' }, b.token)
  t.same(
    v.body,
    { identityId: b.identityId, userId: null, displayName: null, verified: false, bits: 13 },
    'the same token verifies after a restart: the key is kept with the data',
  )
  proc.signal('SIGTERM')
  await proc.exited
})
