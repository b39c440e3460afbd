import { readFileSync } from 'node:fs'
import t from 'tap'
import { parse } from 'yaml'
import { projectPath } from '../../libs/shared/paths.js'
import { PACKAGE_DIRS, packageJson, run, userEnv } from './packed.js'

// The release: `.github/workflows/release.yml` tests, packs and publishes the three packages on a
// version tag; here each package goes through `npm publish --dry-run` (its prepack builds it, npm
// checks the manifest and lists what it would upload), and the workflow is read for its order.

t.setTimeout(300_000)

interface Step {
  run?: string
  uses?: string
}
interface Workflow {
  on: { push: { tags: string[] } }
  jobs: Record<string, { needs?: string; steps: Step[]; permissions?: Record<string, string> }>
}

t.test('npm publish --dry-run accepts each package, with what users need and nothing else', async (t) => {
  const must: Record<string, string[]> = {
    '@wire-board/server': [
      'dist/apps/server/wire-server.js',
      'dist/apps/cli/main.js',
      'migrations/0001_create_signals.sql',
      'apps/reader/view/index.html',
      'client/dist/client/src/index.js',
    ],
    '@wire-board/client': ['dist/client/src/index.js', 'dist/client/src/index.d.ts', 'README.md'],
    '@wire-board/cli': ['bin/wire.js', 'README.md'],
  }
  for (const dir of PACKAGE_DIRS) {
    const { name, version } = packageJson(dir)
    const r = await run('npm', ['publish', '--dry-run', '--json'], dir, userEnv(), 240_000)
    t.equal(r.code, 0, `${name}: npm publish --dry-run`, { stderr: r.err })
    const out = JSON.parse(r.out.slice(r.out.indexOf('{'))) as Record<string, { id: string; files: { path: string }[] }>
    const pkg = out[name] ?? (out as unknown as { id: string; files: { path: string }[] })
    t.equal(pkg.id, `${name}@${version}`, `${name}: would publish ${version}`)
    const files = pkg.files.map((f) => f.path)
    t.same(
      must[name]!.filter((f) => !files.includes(f)),
      [],
      `${name}: ships what it needs`,
    )
    t.same(
      files.filter((f) => /^(test|bench)\/|\.map$|^src\/.*\.ts$|tsconfig/.test(f)),
      [],
      `${name}: and no tests, benchmarks, sources or maps`,
    )
  }
})

t.test('the release workflow: on a v* tag, the suite, then pack, release and publish in dependency order', async (t) => {
  const wf = parse(readFileSync(projectPath('.github/workflows/release.yml'), 'utf8')) as Workflow
  t.same(wf.on.push.tags, ['v*'], 'runs on version tags')
  const runs = (job: string) => (wf.jobs[job]?.steps ?? []).map((s) => s.run ?? '').join('\n')
  t.match(runs('test'), /bash \.ci\/run/, 'the test job runs what CI runs')
  t.match(runs('test'), /"v\$v" = "\$GITHUB_REF_NAME"/, 'and refuses a tag that is not the packages’ version')
  t.equal(wf.jobs.publish?.needs, 'test', 'publishing waits for the tests')
  const publish = runs('publish')
  t.match(publish, /npm pack --pack-destination \. \. \.\/client \.\/cli/, 'packs the three packages')
  t.match(publish, /gh release create .*wire-board-\*\.tgz/, 'attaches the tarballs to the release (the README installs them)')
  const order = [...publish.matchAll(/npm publish --provenance --access public (\S+)/g)].map((m) => m[1])
  t.same(order, ['.', './client', './cli'], 'publishes the server before the command line that depends on it')
  t.equal(wf.jobs.publish?.permissions?.['id-token'], 'write', 'with provenance')
  t.same(
    PACKAGE_DIRS.map((d) => packageJson(d).publishConfig),
    PACKAGE_DIRS.map(() => ({ access: 'public' })),
    'each package is public',
  )
})
