import t from 'tap'
import { fleetSchema, startRedis, startRole, type Role } from '../helpers/fleet.js'
import { startProcess } from '../helpers/process.js'
import { TEST_DATABASE_URL, TEST_REDIS_URL } from '../helpers/services.js'
import { projectPath } from '../../libs/shared/paths.js'
import { WireClient } from '../../client/src/index.js'
import { collect, recordingFetch } from './support.js'

// The client against the fleet (writer and readers as child processes of the built code): a
// follower keeps its promise through a reader's death and restart and through a Redis outage.

/** A reader on a given port: the same address coming back after a restart. */
async function readerOn(t: Parameters<typeof startRole>[0], port: number, env: Record<string, string>) {
  const proc = await startProcess(
    t,
    projectPath('node_modules/.bin/node'),
    [projectPath('dist/apps/reader/main.js')],
    {
      ...process.env,
      LOG_LEVEL: 'info',
      SERVER_HOST: '127.0.0.1',
      WIRE_CONFIG: '/nonexistent/board.json',
      ...env,
      SERVER_PORT: String(port),
    },
    /Server listening/,
    30_000,
  )
  return { stop: async (sig: NodeJS.Signals = 'SIGTERM') => (proc.signal(sig), proc.exited) }
}

const portOf = (r: Role) => Number(new URL(r.url).port)

t.test('follow across a reader killed, a reader restarted and a reader stopped: nothing lost, nothing repeated', async (t) => {
  const env = { DATABASE_URL: TEST_DATABASE_URL, REDIS_URL: TEST_REDIS_URL, WIRE_PG_SCHEMA: fleetSchema(t) }
  const writer = await startRole(t, 'writer', env)
  const [a, b] = await Promise.all([startRole(t, 'reader', env), startRole(t, 'reader', env)])
  const rec = recordingFetch()
  const wire = new WireClient({ url: writer.url, readUrl: [a!.url, b!.url], token: 'fleet-agent-token', fetch: rec.fetch })
  const acked: string[] = []
  const publish = async (n: number) => {
    for (let i = 0; i < n; i++) acked.push((await wire.publish({ $type: 'broadcast', i: acked.length })).signal.id)
  }
  const retries: string[] = []
  const ctl = new AbortController()
  const follower = wire.follow(
    {},
    { cursor: 0, signal: ctl.signal, backoff: { baseMs: 100, maxMs: 1000 }, onRetry: (r) => void retries.push(r.url) },
  )
  const c = collect(follower)

  await publish(5)
  await c.until(5)
  t.equal(follower.url, a!.url, 'following the first reader')
  await a!.stop('SIGKILL')
  await publish(5)
  await c.until(10)
  t.equal(follower.url, b!.url, 'moved to the second reader with the same cursor')

  const aAgain = await readerOn(t, portOf(a!), env) // the first reader restarts on its address
  await b!.stop('SIGTERM')
  await publish(5)
  await c.until(15)
  t.equal(follower.url, a!.url, 'and back to the restarted first reader')
  ctl.abort()
  await c.done
  await aAgain.stop()

  t.same(
    c.got.map((s) => s.id),
    acked,
    'every acknowledged signal, once, in order',
  )
  t.same(rec.pages.flat(), acked, 'the readers sent each signal once: the cursor carried over exactly, dedupe had nothing to hide')
  t.ok(retries.length >= 2, `it retried through the failures (${retries.length} retries)`)
})

t.test('follow through a Redis outage: nothing lost, nothing repeated', async (t) => {
  const redis = await startRedis(t)
  const env = { DATABASE_URL: TEST_DATABASE_URL, REDIS_URL: redis.url, WIRE_PG_SCHEMA: fleetSchema(t), WAKE_FALLBACK_POLL_MS: '1000' }
  const writer = await startRole(t, 'writer', env)
  const reader = await startRole(t, 'reader', env)
  const rec = recordingFetch()
  const wire = new WireClient({ url: writer.url, readUrl: reader.url, token: 'fleet-agent-token', fetch: rec.fetch })
  const acked: string[] = []
  const publish = async (n: number) => {
    for (let i = 0; i < n; i++) acked.push((await wire.publish({ $type: 'broadcast', i: acked.length })).signal.id)
  }
  const ctl = new AbortController()
  const c = collect(wire.follow({}, { cursor: 0, signal: ctl.signal }))
  await publish(3)
  await c.until(3)
  await redis.stop()
  await publish(3)
  await c.until(6)
  await redis.start()
  await publish(3)
  await c.until(9)
  ctl.abort()
  await c.done
  t.same(
    c.got.map((s) => s.id),
    acked,
    'every acknowledged signal, once, in order, before, during and after',
  )
  t.same(rec.pages.flat(), acked, 'and the reader sent each once')
})
