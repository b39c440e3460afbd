import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { welcome } from '../../apps/server/welcome.js'
import { projectPath } from '../../libs/shared/paths.js'
import { startProcess } from '../helpers/process.js'
import { listeningBoard, TOKEN } from '../client/support.js'
import { CLI, NODE } from './run.js'
import { until } from '../helpers/wait.js'

// `wire follow` as a long-running child process: NDJSON and plain lines, and --cursor-file across a Ctrl-C.

const lines = (out: string) =>
  out
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { id: string })
t.test('follow --cursor-file resumes after SIGINT: nothing lost, nothing repeated', async (t) => {
  const { wire: client } = await listeningBoard(t)
  const url = client.urls[0]!
  const dir = mkdtempSync(join(tmpdir(), 'wire-follow-'))
  const cursorFile = join(dir, 'cursor')
  const env = { ...process.env, WIRE_URL: url, WIRE_TOKEN: TOKEN }
  const follow = () => startProcess(t, NODE, [CLI, 'follow', '--json', '--cursor-file', cursorFile], env, /wire: following /, 20_000)
  const acked: string[] = []
  const publish = async (n: number) => {
    for (let i = 0; i < n; i++) acked.push((await client.publish({ $type: 'broadcast', i: acked.length })).signal.id)
  }

  await publish(2) // before the first run: the newest page shows them
  const first = await follow()
  await publish(3)
  await until(() => lines(first.output()).length >= 5, 20_000, 'five lines')
  await until(() => existsSync(cursorFile), 20_000, 'the cursor file')
  first.signal('SIGINT')
  const end = await first.exited
  t.equal(end.code, 0, 'Ctrl-C ends follow cleanly')
  const kept = Number(readFileSync(cursorFile, 'utf8'))
  t.ok(Number.isSafeInteger(kept) && kept > 0, `the cursor file holds ${kept}`)

  await publish(4) // while no one follows
  const second = await follow()
  t.match(
    second.output(),
    new RegExp(`wire: following \\S+ after cursor ${kept}\n`),
    'names the cursor it resumed from, the one in the file',
  )
  await publish(2)
  await until(() => lines(second.output()).length >= 6, 20_000, 'six lines')
  // Ctrl-C in the middle of a stream of publishes
  const burst = publish(40)
  await until(() => lines(second.output()).length >= 12, 20_000, 'some of the burst')
  second.signal('SIGINT')
  t.equal((await second.exited).code, 0)
  await burst
  const third = await follow()
  await until(
    () => lines(first.output()).length + lines(second.output()).length + lines(third.output()).length >= acked.length,
    20_000,
    'the rest',
  )
  third.signal('SIGINT')
  t.equal((await third.exited).code, 0)

  const seen = [...lines(first.output()), ...lines(second.output()), ...lines(third.output())].map((s) => s.id)
  t.same(seen, acked, `three runs together: every signal once, in order (${lines(second.output()).length} in the interrupted run)`)
})

t.test('follow prints one plain line per signal when not on a terminal, and stops on SIGTERM', async (t) => {
  const { wire: client } = await listeningBoard(t)
  const proc = await startProcess(
    t,
    NODE,
    [CLI, 'follow', '--tag', 'ops'],
    { ...process.env, WIRE_URL: client.urls[0] },
    /wire: following /,
    20_000,
  )
  const s = (await client.publish({ $type: 'broadcast', $tags: ['ops'], text: 'deploy\nstarted' })).signal
  await client.publish({ $type: 'broadcast', $tags: ['other'], text: 'not shown' })
  const last = (await client.publish({ $type: 'offer', $tags: ['ops'], price: 3 })).signal
  await until(() => proc.output().includes(last.id), 20_000, 'two lines')
  proc.signal('SIGTERM')
  t.equal((await proc.exited).code, 0)
  const out = proc
    .output()
    .split('\n')
    .filter((l) => /^\d{4}-/.test(l))
  t.equal(out.length, 2, 'the filtered-out signal is not shown')
  t.match(
    out[0],
    new RegExp(`^${s.createdAt}  broadcast  fp_\\w+  #ops  deploy started  ${s.id}$`),
    'ISO time, type, origin, tags, text on one line, id',
  )
  t.match(out[1], /offer .* \{"price":3\}/, 'a payload without text shows as JSON')
  t.notMatch(proc.output(), /\u001b\[/, 'no colour codes in a pipe')
})

t.test("the welcome text's wire commands work as printed (in a checkout: npm run -s wire --)", async (t) => {
  const { s, wire: client } = await listeningBoard(t)
  const url = client.urls[0]!
  const text = welcome(s.cfg, url, 'main', true)
  const commands = text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => /npm run -s wire -- /.test(l))
  t.equal(commands.length, 2, text)
  // `VAR=value … npm run -s wire -- args…` as a shell would split it (the examples use only "double quotes")
  const parse = (line: string) => {
    const words = [...line.matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2]!)
    const env = Object.fromEntries(
      words.filter((w) => /^[A-Z_]+=/.test(w)).map((w) => [w.slice(0, w.indexOf('=')), w.slice(w.indexOf('=') + 1)]),
    )
    return { env, args: words.slice(words.indexOf('--') + 1) }
  }
  const follow = parse(commands.find((c) => c.includes('follow'))!)
  const publish = parse(commands.find((c) => c.includes('publish'))!)
  t.equal(follow.env.WIRE_URL, /is live at (\S+)/.exec(text)?.[1], 'the examples name the board the banner names')
  const npx = (args: string[]) => ['run', '-s', 'wire', '--', ...args]
  const proc = await startProcess(t, 'npm', npx(follow.args), { ...process.env, ...follow.env }, /wire: following /, 60_000)
  const out = await new Promise<string>((resolve, reject) => {
    const child = spawn('npm', npx(publish.args), { env: { ...process.env, ...publish.env }, cwd: projectPath() })
    let o = ''
    child.stdout.on('data', (d) => (o += d))
    child.on('error', reject).on('close', (code) => (code === 0 ? resolve(o) : reject(new Error(`exit ${code}`))))
  })
  const published = JSON.parse(out).signal
  t.same([published.payload.text, published.tags], ['hi, wire', ['hello']])
  await until(() => proc.output().includes(published.id), 20_000, 'the follower shows it')
  proc.signal('SIGINT')
  const end = await proc.exited
  t.ok(end.code === 0 || end.signal === 'SIGINT', `Ctrl-C ends it (npm passes the signal on): ${JSON.stringify(end)}`)
  t.notMatch(proc.output(), /Error|at .*\.js:\d+/, 'without an error')
})
