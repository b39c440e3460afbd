import t from 'tap'
import { NODE_FLOOR, nodeTooOld } from '../../libs/shared/runtime/node-floor.js'
import { projectPath } from '../../libs/shared/paths.js'
import { nodeVersion, PACKAGE_DIRS, packageJson, REPO, run, userEnv } from './packed.js'

// The honest Node story: one floor for the server and the command line, declared in `engines`
// where npm reads it and enforced at start with one line; the client's lower floor; a quiet install.

const OLD_NODE = '/usr/bin/node' // this machine's system Node (20)

t.test('nodeTooOld compares versions, not strings', async (t) => {
  t.equal(NODE_FLOOR, '22.19.0')
  for (const v of ['22.19.0', '22.23.3', '23.0.0', '24.21.0', 'v30.1.2']) t.equal(nodeTooOld('wire', v), null, `${v} is new enough`)
  for (const v of ['22.18.9', '22.12.0', '22.9.0', '20.20.2', '18.0.0', 'v4.9.1'])
    t.equal(
      nodeTooOld('wire', v),
      `wire: needs Node.js 22.19.0 or newer, and this is Node.js ${v} (see "Node.js and the toolchain" in the README)`,
      `${v} is refused`,
    )
})

t.test('engines say what the code enforces, in every package', async (t) => {
  const [server, client, cli] = PACKAGE_DIRS.map(packageJson)
  t.equal(server!.engines?.node, '>=22.19', 'the server declares the floor it checks')
  t.equal(cli!.engines?.node, '>=22.19', 'so does the command line')
  t.equal(client!.engines?.node, '>=20', 'the client needs only fetch: Node 20 (run there by the install test)')
  t.equal(cli!.dependencies?.['@wire-board/server'], server!.version, 'the command line runs the server package of its own version')
  t.same([client!.version, cli!.version], [server!.version, server!.version], 'the three are released together')
})

t.test('a checkout installs quietly: the one install script in the tree is approved', async (t) => {
  const r = await run('npm', ['install-scripts', 'ls'], REPO, userEnv(), 60_000)
  t.equal(r.code, 0, 'npm install-scripts ls', { stderr: r.err })
  t.match(r.out, /No packages with unreviewed install scripts/, 'the `node` dev dependency is in allowScripts')
})

t.test('below the floor, every entry point of a checkout stops with one line', async (t) => {
  const old = await nodeVersion(OLD_NODE)
  // fails (never skips) without an older Node: the refusal is what this test exists to see
  if (!t.ok(old && nodeTooOld('x', old), `${OLD_NODE} (${old ?? 'missing'}) is older than ${NODE_FLOOR}`) || !old) return
  for (const [main, program] of [
    ['dist/apps/server/main.js', 'wire'],
    ['dist/apps/writer/main.js', 'wire'],
    ['dist/apps/sweeper/main.js', 'wire'],
    ['dist/apps/server/wire-server.js', 'wire-server'],
    ['dist/apps/cli/main.js', 'wire'],
  ] as const) {
    const r = await run(
      OLD_NODE,
      [projectPath(main), ...(program === 'wire' && main.includes('cli') ? ['follow'] : [])],
      REPO,
      userEnv({ WIRE_DATA_DIR: '/nonexistent/wire-floor' }),
      30_000,
    )
    t.equal(r.code, 1, `${main} on Node ${old} exits 1`)
    t.equal(r.err, `${nodeTooOld(program, old)}\n`, 'with one line on stderr')
    t.equal(r.out, '', 'and nothing else')
  }
})
