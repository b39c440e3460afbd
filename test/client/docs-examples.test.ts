import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import t, { type Test } from 'tap'
import { projectPath } from '../../libs/shared/paths.js'
import { NODE } from '../cli/run.js'
import { listeningBoard } from './support.js'
import { until } from '../helpers/wait.js'

// docs/client.md's examples, run as written (the package name pointed at the built client).

const blocks = [...readFileSync(projectPath('docs/client.md'), 'utf8').matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]!)
const entry = pathToFileURL(projectPath('client/dist/client/src/index.js')).href
/** Runs a script in `dir` (where the follower keeps cursor.txt); killed with the test at the latest. */
function run(t: Test, dir: string, file: string, env: NodeJS.ProcessEnv) {
  const child = spawn(NODE, [file], { cwd: dir, env })
  let out = ''
  child.stdout.on('data', (d) => (out += d))
  child.stderr.on('data', (d) => (out += d))
  const exited = new Promise<number | null>((r) => child.on('close', (code) => r(code)))
  t.teardown(() => void child.kill('SIGKILL'))
  return { output: () => out, exited, kill: (sig: NodeJS.Signals) => child.kill(sig) }
}

function script(dir: string, name: string, code: string): string {
  const file = join(dir, name)
  writeFileSync(file, code.replaceAll(`'@wire-board/client'`, `'${entry}'`))
  return file
}

t.test('the three examples are there, and the follower is ten lines', async (t) => {
  t.equal(blocks.length, 3)
  t.ok(blocks[0]!.trim().split('\n').length <= 10, 'ten lines or fewer')
  t.ok(readFileSync(projectPath('README.md'), 'utf8').includes(blocks[0]!), "the README's follower is the same code")
})

t.test('the ten-line follower follows, stops on Ctrl-C, and resumes from its cursor file', async (t) => {
  const { url, wire } = await listeningBoard(t)
  const dir = mkdtempSync(join(tmpdir(), 'wire-doc-'))
  const file = script(dir, 'follow.mjs', blocks[0]!)
  const env = { ...process.env, WIRE_URL: url }
  const a = (await wire.publish({ $type: 'broadcast', $tags: ['hello'], text: 'one' })).signal
  await wire.publish({ $type: 'broadcast', $tags: ['other'], text: 'not followed' })
  const first = run(t, dir, file, env)
  await until(() => first.output().includes(a.createdAt), 20_000, 'the newest page')
  const b = (await wire.publish({ $type: 'broadcast', $tags: ['hello'], text: 'two' })).signal
  await until(() => first.output().includes(b.createdAt), 20_000, 'the live one')
  await until(() => existsSync(join(dir, 'cursor.txt')) && readFileSync(join(dir, 'cursor.txt'), 'utf8') !== '', 20_000, 'cursor.txt')
  first.kill('SIGINT')
  t.equal(await first.exited, 0, 'Ctrl-C ends it cleanly')
  t.notMatch(first.output(), /not followed/)

  const c = (await wire.publish({ $type: 'broadcast', $tags: ['hello'], text: 'three' })).signal
  const second = run(t, dir, file, env)
  await until(() => second.output().includes(c.createdAt), 20_000, 'the one published while it was down')
  t.notMatch(second.output(), /"one"|"two"/, 'after a restart: only what it had not seen')
  second.kill('SIGINT')
  t.equal(await second.exited, 0)
})

t.test("the asking agent gets the answering agent's reply", async (t) => {
  const { url, wire } = await listeningBoard(t)
  const dir = mkdtempSync(join(tmpdir(), 'wire-doc-'))
  const ask = script(dir, 'ask.mjs', blocks[1]!)
  const answer = script(dir, 'answer.mjs', blocks[2]!)
  const old = (await wire.publish({ $type: 'request', $tags: ['gpu'], text: 'an old request' })).signal
  const answerer = run(t, dir, answer, { ...process.env, WIRE_URL: url, WIRE_TOKEN: 'answering-agent-token' })
  await until(() => existsSync(join(dir, 'answered.txt')), 20_000, 'the answerer knows the head')
  const asked = await new Promise<{ code: number | null; out: string }>((resolve) => {
    const p = spawn(NODE, [ask], { env: { ...process.env, WIRE_URL: url, WIRE_TOKEN: 'asking-agent-token' } })
    let out = ''
    p.stdout.on('data', (d) => (out += d))
    p.stderr.on('data', (d) => (out += d))
    p.on('close', (code) => resolve({ code, out }))
  })
  t.equal(asked.code, 0, asked.out)
  t.match(asked.out, /^asked \w{20}\nfp_\w+ replied: I can, 2 credits a frame\n$/, 'asked, got the reply, and exited')
  const first = asked.out.split('\n')[0]!.slice('asked '.length)

  // restarted, it answers what came while it was down, and nothing twice
  await until(async () => (await wire.get(first)).replies.length === 1, 20_000, 'the reply is in')
  const cursorBefore = Number(readFileSync(join(dir, 'answered.txt'), 'utf8'))
  answerer.kill('SIGKILL')
  await answerer.exited
  const whileDown = (await wire.publish({ $type: 'request', $tags: ['gpu'], text: 'asked while it was down' })).signal
  t.ok(cursorBefore > 0, 'the answerer stored its place')
  const again = run(t, dir, answer, { ...process.env, WIRE_URL: url, WIRE_TOKEN: 'answering-agent-token' })
  await until(async () => (await wire.get(whileDown.id)).replies.length === 1, 20_000, 'the request made while it was down is answered')
  const later = (await wire.publish({ $type: 'request', $tags: ['gpu'], text: 'a live one' })).signal
  await until(async () => (await wire.get(later.id)).replies.length === 1, 20_000, 'and a live one after the restart')
  t.equal((await wire.get(first)).replies.length, 1, 'the request answered before the restart is not answered again')
  t.equal((await wire.get(old.id)).replies.length, 0, 'a request from before its first run is never answered')
  again.kill('SIGKILL')
})
