import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import t from 'tap'
import { freePort, startProcess } from '../helpers/process.js'
import { until } from '../helpers/wait.js'
import { nodeVersion, PACKAGE_DIRS, packageJson, readmeClientExample, readmeInstallBlocks, REPO, run, userEnv } from './packed.js'

// What users install, tested as they get it: the README's install lines run as written in an empty
// directory outside the repository (each package packed by `npm pack`, then installed from the
// tarballs); then the server's bin runs a board on the embedded database, the CLI publishes and
// follows it, and an ES module imports the client under the oldest Node the client claims.

const OLD_NODE = '/usr/bin/node' // this machine's system Node (20): the client's floor, and below the server's

// ~25-85 s on an idle machine (most of it unpacking 190 packages); a loaded CI box has taken 110 s, and an
// install that had to reach a slow registry more than 120 s
t.setTimeout(420_000)

const FOLLOW_SCRIPT = `import { WireClient } from '@wire-board/client'
const wire = new WireClient({ url: process.env.WIRE_URL })
let n = 0
for await (const s of wire.follow({ tag: 'pkg' }, { cursor: 0 })) {
  console.log(s.payload.text)
  if (++n === 2) break
}
console.log('node', process.versions.node)
`

t.test('the packed packages install from their tarballs and run, as the README says', async (t) => {
  const [setup, fromRelease] = readmeInstallBlocks()
  const names = PACKAGE_DIRS.map((d) => packageJson(d).name)
  t.same(names, ['@wire-board/server', '@wire-board/client', '@wire-board/cli'], 'three packages: root, client/, cli/')
  t.ok(
    setup?.includes('npx wire-server') && setup.includes('npx wire follow'),
    'the README runs wire-server and wire follow with npx, as below',
  )
  const makeDir = setup!.find((l) => l.startsWith('mkdir '))!
  const install = setup?.find((l) => l.startsWith('npm install $(npm pack'))
  t.ok(install, 'after installing them from a clone')
  const version = packageJson(REPO).version
  const releaseLine = `npm install ./wire-board-server-${version}.tgz ./wire-board-cli-${version}.tgz ./wire-board-client-${version}.tgz`
  t.same(fromRelease, [releaseLine], 'or from the release tarballs of this version')
  t.match(
    readFileSync(join(REPO, 'README.md'), 'utf8'),
    /not on the npm registry yet\*\*: `npm install @wire-board\/server` answers `E404`/,
    'and says the registry does not have them yet',
  )

  const home = mkdtempSync(join(tmpdir(), 'wire-install-'))
  t.teardown(() => rmSync(home, { recursive: true, force: true }))
  t.ok(relative(REPO, home).startsWith('..'), `${home} is outside the repository`)
  const env = userEnv({ W: REPO })
  // an install fetches what the npm cache lacks from the registry: allow it more than a command's usual two minutes
  const sh = async (line: string, cwd: string) => {
    const r = await run('sh', ['-c', line], cwd, env, 240_000)
    t.equal(r.code, 0, `\`${line}\` succeeds`, { stdout: r.out, stderr: r.err })
    return r
  }
  await sh(makeDir, home)
  const dir = join(home, /^mkdir (\S+)/.exec(makeDir)![1]!)
  const installed = await sh(install!, dir)
  // a supported install (this Node is the project's own, >= every engines floor) prints no warning of ours
  t.notMatch(installed.err, /EBADENGINE|install-scripts|allowScripts/, 'the install is quiet: no engine or install-script warnings')
  const tarballs = readdirSync(dir).filter((f) => f.endsWith('.tgz'))
  t.same(
    tarballs.sort(),
    ['wire-board-cli-0.1.0.tgz', 'wire-board-client-0.1.0.tgz', 'wire-board-server-0.1.0.tgz'],
    'npm pack wrote the tarballs where it was told',
  )
  t.same(
    readdirSync(REPO).filter((f) => f.endsWith('.tgz')),
    [],
    'and none into the checkout',
  )
  const again = await sh(releaseLine, dir) // the release's line, on the same files the release workflow attaches
  t.notMatch(again.err, /EBADENGINE|ERR!/, 'the release line installs the tarballs as written')
  const ignored = spawnSync('git', ['check-ignore', '-q', 'wire-board-server-0.1.0.tgz'], { cwd: REPO })
  t.equal(ignored.status, 0, 'a plain `npm pack` in the checkout writes a tarball git ignores')

  const server = join(dir, 'node_modules/@wire-board/server')
  for (const shipped of [
    'migrations/0001_create_signals.sql',
    'apps/reader/view/index.html',
    'client/dist/client/src/index.js',
    'dist/apps/cli/main.js',
  ])
    t.ok(existsSync(join(server, shipped)), `the server package ships ${shipped}`)
  for (const kept of ['apps/server/main.ts', 'test', 'dist/bench', 'tsconfig.json', 'dist/apps/server/main.js.map'])
    t.notOk(existsSync(join(server, kept)), `and not ${kept}`)

  // the server's bin, as the README runs it: the embedded default in this directory, a free port
  const port = await freePort()
  const url = `http://localhost:${port}`
  const board = await startProcess(
    t,
    'npx',
    ['wire-server'],
    { ...env, SERVER_PORT: String(port), LOG_LEVEL: 'warn' },
    /is live at/,
    150_000,
    dir,
  )
  t.match(
    board.output(),
    new RegExp(`is live at ${url} .*embedded PostgreSQL \\(PGlite\\) in \\./\\.wire`),
    'wire-server runs the whole board on PGlite',
  )
  t.match(board.output(), /npx @wire-board\/cli follow/, 'and, installed, names the command line by its package')
  const res = await fetch(`${url}/sw/signals`, {
    method: 'POST',
    headers: { authorization: 'Bearer package-token', 'content-type': 'application/json' },
    body: JSON.stringify({ $type: 'broadcast', $tags: ['pkg'], text: 'over HTTP' }),
  })
  t.equal(res.status, 200, 'it answers a publish')
  t.equal((await fetch(`${url}/view/client/client/src/index.js`)).status, 200, 'and serves the viewer with the client it ships')

  // the CLI, as the README runs it (npx finds the installed `wire`)
  const cliEnv = { ...env, WIRE_URL: url, WIRE_TOKEN: 'package-token' }
  const published = await run('npx', ['wire', 'publish', '--tag', 'pkg', 'from the cli'], dir, cliEnv)
  t.equal(published.code, 0, 'wire publish', { stderr: published.err })
  t.equal(JSON.parse(published.out).signal?.payload?.text, 'from the cli', 'publishes')
  const follower = await startProcess(t, 'npx', ['wire', 'follow', '--json', '--cursor', '0'], cliEnv, /wire: following /, 30_000, dir)
  await until(() => follower.output().includes('from the cli'), 20_000, 'wire follow shows both signals')
  t.match(follower.output(), /over HTTP[\s\S]*from the cli/, 'wire follow prints both, in feed order')
  follower.signal('SIGINT')
  await follower.exited

  // the README's client example, saved as the README says in this `npm init -y` project, run as it says
  const example = readmeClientExample()
  t.match(example, { file: /\S/, code: /from '@wire-board\/client'/ }, 'the README names the file its client example is saved as')
  writeFileSync(join(dir, example.file), example.code)
  const hello = await run('npx', ['wire', 'publish', '--tag', 'hello', 'for the readme example'], dir, cliEnv)
  t.equal(hello.code, 0, 'a signal tagged hello')
  const readmeFollower = await startProcess(t, 'node', [example.file], cliEnv, /for the readme example|Error/, 30_000, dir)
  t.match(readmeFollower.output(), /broadcast \{.*"text":"for the readme example"/, `node ${example.file} follows the board`)
  readmeFollower.signal('SIGINT')
  t.equal((await readmeFollower.exited).code, 0, 'and stops on Ctrl-C')
  t.match(readFileSync(join(dir, 'cursor.txt'), 'utf8'), /^\d+$/, 'keeping its cursor in cursor.txt')

  // the client, imported by an ES module under the oldest Node it claims; below the server's floor,
  // each bin stops with one line before anything else loads. Fails (never skips) without that Node.
  const claimed = /^>=\s*(\d+)/.exec(packageJson(PACKAGE_DIRS[1]!).engines?.node ?? '')?.[1]
  const old = (await nodeVersion(OLD_NODE)) ?? 'none'
  if (t.equal(old.split('.')[0], claimed, `${OLD_NODE} is Node ${claimed}, the client's floor (found ${old})`)) {
    writeFileSync(join(dir, 'follow.mjs'), FOLLOW_SCRIPT)
    const r = await run(OLD_NODE, ['follow.mjs'], dir, cliEnv, 30_000)
    t.equal(r.code, 0, `the client runs on Node ${old}`, { stderr: r.err })
    t.equal(r.out, `over HTTP\nfrom the cli\nnode ${old}\n`, 'and follows the board from cursor 0')
    for (const bin of ['wire-server', 'wire']) {
      const refused = await run(OLD_NODE, [join(dir, 'node_modules/.bin', bin)], dir, cliEnv, 30_000)
      t.equal(refused.code, 1, `${bin} on Node ${old} exits 1`)
      t.match(
        refused.err,
        new RegExp(`^${bin}: needs Node\\.js 22\\.19\\.0 or newer, and this is Node\\.js ${old.replace(/\./g, '\\.')} \\(.*\\)\\n$`),
        'with one line',
      )
    }
  }
  board.signal('SIGINT')
  const end = await board.exited
  t.ok(end.code === 0 || end.signal === 'SIGINT', `Ctrl-C stops the board (${JSON.stringify(end)})`)
})
