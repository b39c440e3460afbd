import { execFileSync, spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createServer } from 'node:http'
import t from 'tap'
import { projectPath } from '../../libs/shared/paths.js'
import { freePort, startProcess, type Proc } from '../helpers/process.js'
import { dropSchema, TEST_DATABASE_URL, uniqueSchema } from '../helpers/services.js'
import { until } from '../helpers/wait.js'

// The README's jq follow loop, run as written with bash, curl and jq (only its URL pointed at a
// real board process), against a board that stops mid-way and comes back: the loop keeps its
// cursor through failed reads, backs off instead of spinning, and carries on without a replay.

execFileSync(process.execPath, [projectPath('scripts/build.mjs')], { stdio: 'inherit' })

const readme = readFileSync(projectPath('README.md'), 'utf8')
const loop = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!).find((b) => b.includes('while :') && b.includes('jq'))

t.test("the README's follow loop keeps its cursor and backs off while the board is down", async (t) => {
  t.ok(loop, 'the README has the loop')
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  const schema = uniqueSchema('readme')
  t.teardown(() => dropSchema(schema))
  const env: Record<string, string | undefined> = {
    ...process.env,
    DATABASE_URL: TEST_DATABASE_URL,
    WIRE_PG_SCHEMA: schema,
    SERVER_PORT: String(port),
    SERVER_HOST: '127.0.0.1',
    WIRE_CONFIG: '/nonexistent/board.json',
    LOG_LEVEL: 'warn',
  }
  for (const k of ['REDIS_URL', 'IDENTITY_URL']) delete env[k]
  const board = (): Promise<Proc> => startProcess(t, process.execPath, [projectPath('dist/apps/server/main.js')], env, /is live at/)
  const publish = async (text: string) => {
    const res = await fetch(`${base}/sw/signals`, {
      method: 'POST',
      headers: { authorization: 'Bearer readme-loop-token', 'content-type': 'application/json' },
      body: JSON.stringify({ $type: 'broadcast', text }),
    })
    t.equal(res.status, 200, `published ${text}`)
  }

  let server = await board()
  for (const text of ['old-1', 'old-2', 'old-3']) await publish(text)
  const follower = spawn('bash', ['-c', loop!.replaceAll('http://localhost:4000', base)], {
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  t.teardown(() => {
    try {
      process.kill(-follower.pid!, 'SIGKILL')
    } catch {
      /* gone */
    }
  })
  let out = ''
  follower.stdout.on('data', (d) => (out += d))
  follower.stderr.on('data', (d) => (out += d))
  const printed = () => out.split('\n').filter((l) => l !== '')
  const lines = (text: string) => printed().filter((l) => l.includes(`"text":"${text}"`)).length

  // publish until the loop prints one (it starts with the head, so what came before is not printed)
  let live = 0
  await until(
    async () => {
      if (printed().length > 0) return true
      await publish(`live-${++live}`)
      await new Promise((r) => setTimeout(r, 200)) // a publish at most every 200 ms while it starts
      return false
    },
    20_000,
    'the loop prints a live signal',
  )
  await until(() => lines(`live-${live}`) === 1, 20_000, 'the loop printed the last live signal')
  const livePrinted = printed().length
  const head = ((await (await fetch(`${base}/sw/signals`)).json()) as { nextCursor: number }).nextCursor

  server.signal('SIGTERM')
  await server.exited
  // the board's port now answers 503, as a proxy would while the board restarts; every read is recorded
  const seen: Array<{ url: string; at: number }> = []
  const stand = createServer((req, res) => {
    seen.push({ url: req.url!, at: Date.now() })
    res
      .writeHead(503, { 'content-type': 'application/json', 'retry-after': '1' })
      .end('{"error":{"code":"unavailable","message":"restarting"}}')
  })
  await new Promise<void>((r) => stand.listen(port, '127.0.0.1', () => r()))
  await until(() => seen.length >= 3, 20_000, 'three reads while the board is down')
  await new Promise<void>((r) => stand.close(() => r()))
  stand.closeAllConnections()

  t.same(
    seen.map((s) => s.url),
    seen.map(() => `/sw/signals?cursor=${head}&wait=25`),
    'every read while down carried the cursor it had',
  )
  t.ok(seen[1]!.at - seen[0]!.at >= 900, `waited between failed reads (${seen[1]!.at - seen[0]!.at} ms)`)
  t.ok(seen[2]!.at - seen[1]!.at >= 1_900, `and waited longer after the next failure (${seen[2]!.at - seen[1]!.at} ms)`)

  server = await board()
  await publish('after-restart')
  await until(() => lines('after-restart') > 0, 40_000, 'the loop prints what came after the restart')
  for (const text of ['old-1', 'old-2', 'old-3']) t.equal(lines(text), 0, `${text}, from before it started, is never printed`)
  t.equal(printed().filter((l) => l.includes('"text":"live-')).length, livePrinted, 'what it printed before the stop is not printed again')
  t.equal(lines('after-restart'), 1)
  t.equal(
    out
      .split('\n')
      .filter((l) => l !== '' && !l.startsWith('{'))
      .join('\n'),
    '',
    'nothing but signals on its output',
  )
  server.signal('SIGTERM')
  await server.exited
})
