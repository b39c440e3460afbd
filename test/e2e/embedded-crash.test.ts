import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { projectPath } from '../../libs/shared/paths.js'
import { freePort, startProcess } from '../helpers/process.js'

// The single process on its embedded database (PGlite in a data directory) killed with SIGKILL while
// many publishes are in flight: after a restart every publish it had acknowledged is on the board.

// a first start makes the embedded database: past 90 s beside the suite's other embedded databases on a loaded machine
t.setTimeout(600_000)

t.test('SIGKILL while publishing on the embedded database: every acknowledged signal survives the restart', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'wire-crash-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const env: Record<string, string | undefined> = {
    ...process.env,
    LOG_LEVEL: 'info',
    WIRE_CONFIG: '/nonexistent/board.json',
    WIRE_DATA_DIR: dir,
  }
  for (const k of ['DATABASE_URL', 'REDIS_URL', 'DATABASE_REPLICA_URL', 'IDENTITY_URL']) delete env[k]
  const port = await freePort()
  env.SERVER_PORT = String(port)
  env.PUBLISH_RATE_LIMIT_MAX = '0'
  env.PUBLISH_ADDRESS_RATE_LIMIT_MAX = '0'
  env.NEW_IDENTITY_RATE_LIMIT_MAX = '0'
  const url = `http://127.0.0.1:${port}`
  const start = () => startProcess(t, process.execPath, [projectPath('dist/apps/server/main.js')], env, /is live at/)

  const first = await start()
  const acked: string[] = []
  let killed = false
  const publishers = Array.from({ length: 24 }, async (_, p) => {
    for (let i = 0; !killed; i++) {
      try {
        const res = await fetch(`${url}/sw/signals`, {
          method: 'POST',
          headers: { authorization: `Bearer crash-publisher-${p}`, 'content-type': 'application/json' },
          body: JSON.stringify({ $type: 'broadcast', p, i }),
        })
        const body = (await res.json()) as { signal?: { id: string } }
        // an answer read after the kill was sent before it: acknowledged all the same
        if (res.status === 200 && body.signal) acked.push(body.signal.id)
      } catch {
        return // the process is gone: this publish was never acknowledged
      }
    }
  })
  while (acked.length < 300) await new Promise((r) => setTimeout(r, 20)) // a state, not a time: enough in flight
  killed = true
  first.signal('SIGKILL')
  const end = await first.exited
  await Promise.all(publishers)
  t.equal(end.signal, 'SIGKILL', 'killed, not stopped')

  const second = await start()
  const missing: string[] = []
  for (const id of acked) if ((await fetch(`${url}/sw/signals/${id}`)).status !== 200) missing.push(id)
  t.same(missing, [], `all ${acked.length} acknowledged publishes are on the board after the restart`)
  const page = (await (await fetch(`${url}/sw/signals?cursor=0&limit=100`)).json()) as { signals: unknown[] }
  t.ok(page.signals.length > 0, 'and the feed serves them')
  second.signal('SIGTERM')
  await second.exited
})
