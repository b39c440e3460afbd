import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { listeningBoard, TOKEN } from '../client/support.js'
import { startProcess } from '../helpers/process.js'
import { until } from '../helpers/wait.js'
import { CLI, NODE } from './run.js'

// `wire follow --exec CMD`: a command per signal, the cursor kept only once it succeeded.

/** The command: appends the signal it was given to $DIR/seen; fails while $DIR/broken exists; blocks while $DIR/hold exists. */
const COMMAND =
  'cat >> "$DIR/seen"; echo >> "$DIR/seen"; ' +
  'if [ -e "$DIR/broken" ]; then exit 3; fi; ' +
  'if [ -e "$DIR/hold" ]; then touch "$DIR/held"; while [ -e "$DIR/hold" ]; do sleep 0.05; done; fi'

function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'wire-exec-'))
  const seen = () =>
    (existsSync(join(dir, 'seen')) ? readFileSync(join(dir, 'seen'), 'utf8') : '')
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => (JSON.parse(l) as { id: string }).id)
  const cursor = () => Number(readFileSync(join(dir, 'cursor'), 'utf8'))
  const flag = (name: string, on: boolean) => (on ? writeFileSync(join(dir, name), '') : rmSync(join(dir, name), { force: true }))
  return { dir, seen, cursor, flag, cursorFile: join(dir, 'cursor') }
}

t.test('a command that fails keeps the cursor: the signal is offered again until it succeeds', async (t) => {
  const { wire: client } = await listeningBoard(t)
  const { dir, seen, cursor, flag, cursorFile } = setup()
  const env = { ...process.env, WIRE_URL: client.urls[0]!, WIRE_TOKEN: TOKEN, DIR: dir }
  await client.publish({ $type: 'broadcast', text: 'before the start' }) // --exec starts at the head: never run
  const follow = await startProcess(
    t,
    NODE,
    [CLI, 'follow', '--cursor-file', cursorFile, '--exec', COMMAND],
    env,
    /wire: following .* after cursor/,
    20_000,
  )
  await until(() => existsSync(cursorFile), 20_000, 'the head in the cursor file')
  const head = cursor()

  flag('broken', true)
  const a = (await client.publish({ $type: 'broadcast', text: 'a' })).signal.id
  await until(() => seen().length >= 2, 20_000, 'A run and run again while the command fails')
  t.match(follow.output(), /exited 3 on signal/, 'the failure is said')
  t.equal(cursor(), head, 'the cursor did not move past a signal whose command failed')
  flag('broken', false)
  await until(() => cursor() > head, 20_000, 'A done')
  const b = (await client.publish({ $type: 'broadcast', text: 'b' })).signal.id
  await until(() => seen().includes(b), 20_000, 'B run')
  const end = (await client.read({ limit: 1 })).nextCursor
  await until(() => cursor() === end, 20_000, 'the cursor after B')
  const runs = seen()
  t.ok(runs.slice(0, -1).every((id) => id === a) && runs.length >= 3, `A offered until it succeeded (${runs.length - 1} runs), then B once`)
  t.equal(runs.at(-1), b)
  follow.signal('SIGINT')
  t.equal((await follow.exited).code, 0)
})

t.test('SIGKILL mid-command loses nothing and repeats at most that one signal', async (t) => {
  const { wire: client } = await listeningBoard(t)
  const { dir, seen, cursor, flag, cursorFile } = setup()
  const env = { ...process.env, WIRE_URL: client.urls[0]!, WIRE_TOKEN: TOKEN, DIR: dir }
  const follow = () =>
    startProcess(t, NODE, [CLI, 'follow', '--cursor-file', cursorFile, '--exec', COMMAND], env, /wire: following .* after cursor/, 20_000)
  const first = await follow()
  await until(() => existsSync(cursorFile), 20_000, 'the head in the cursor file')
  const ids: string[] = []
  for (const text of ['a', 'b']) ids.push((await client.publish({ $type: 'broadcast', text })).signal.id)
  await until(() => seen().length === 2, 20_000, 'A and B run')
  const afterB = (await client.read({ limit: 1 })).nextCursor
  await until(() => cursor() === afterB, 20_000, "B's command done") // else the hold below would catch B's

  flag('hold', true)
  ids.push((await client.publish({ $type: 'broadcast', text: 'c' })).signal.id)
  await until(() => existsSync(join(dir, 'held')), 20_000, "C's command running")
  first.signal('SIGKILL') // the follower and its command, as a killed container
  await first.exited
  flag('hold', false)
  ids.push((await client.publish({ $type: 'broadcast', text: 'd' })).signal.id) // while no one follows

  const second = await follow()
  await until(() => seen().includes(ids[3]!), 20_000, 'D run after the restart')
  second.signal('SIGINT')
  await second.exited
  t.same(seen(), [ids[0], ids[1], ids[2], ids[2], ids[3]], 'every signal run, in order; only C, killed mid-command, twice')
})
