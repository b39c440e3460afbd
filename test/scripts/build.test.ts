import { execFileSync, spawnSync } from 'node:child_process'
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { projectPath } from '../../libs/shared/paths.js'

// scripts/build.mjs, which every `npm start*` runs first: it compiles when a source is newer than
// the last build and does nothing otherwise. Run on a tiny project of its own (real tsc).

// real tsc runs, four of them a test: minutes on a loaded machine
t.setTimeout(400_000)

function project(t: Test) {
  const dir = mkdtempSync(join(tmpdir(), 'wire-build-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  mkdirSync(join(dir, 'scripts'))
  mkdirSync(join(dir, 'apps'))
  copyFileSync(projectPath('scripts/build.mjs'), join(dir, 'scripts/build.mjs'))
  symlinkSync(projectPath('node_modules'), join(dir, 'node_modules'))
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', outDir: 'dist', rootDir: '.', types: [] } }),
  )
  writeFileSync(join(dir, 'tsconfig.build.json'), JSON.stringify({ extends: './tsconfig.json', include: ['apps'] }))
  writeFileSync(join(dir, 'apps/a.ts'), 'export const a: number = 1\n')
  const build = (...args: string[]) =>
    execFileSync(process.execPath, [join(dir, 'scripts/build.mjs'), ...args], { cwd: dir, encoding: 'utf8' })
  const stamp = join(dir, 'dist/.build-stamp')
  return { dir, build, stampTime: () => statSync(stamp).mtimeMs, out: () => readFileSync(join(dir, 'dist/apps/a.js'), 'utf8') }
}

t.test('builds once, skips while up to date, rebuilds after a change, a deletion or --force', async (t) => {
  const p = project(t)
  p.build()
  t.match(p.out(), /a = 1/, 'the first run compiles')
  const first = p.stampTime()

  const past = new Date(first - 60_000) // sources older than the build
  utimesSync(join(p.dir, 'apps/a.ts'), past, past)
  utimesSync(join(p.dir, 'apps'), past, past)
  p.build()
  t.equal(p.stampTime(), first, 'up to date: nothing compiled, the stamp untouched')

  writeFileSync(join(p.dir, 'apps/a.ts'), 'export const a: number = 2\n')
  const future = new Date(first + 60_000)
  utimesSync(join(p.dir, 'apps/a.ts'), future, future)
  p.build()
  t.match(p.out(), /a = 2/, 'a newer source is compiled')
  t.ok(p.stampTime() > first, 'and the stamp moves')

  const second = p.stampTime()
  writeFileSync(join(p.dir, 'apps/b.ts'), 'export const b = 1\n')
  unlinkSync(join(p.dir, 'apps/b.ts'))
  utimesSync(join(p.dir, 'apps'), new Date(second + 120_000), new Date(second + 120_000))
  p.build()
  t.ok(p.stampTime() > second, 'a file added or removed (the directory changed) rebuilds')

  const third = p.stampTime()
  p.build('--force')
  t.ok(p.stampTime() > third, '--force compiles although nothing changed')
})

t.test('a start that compiles says so on stderr, with how long it took; an up-to-date start and npm run build say nothing', async (t) => {
  const p = project(t)
  const stderr = (...args: string[]) =>
    spawnSync(process.execPath, [join(p.dir, 'scripts/build.mjs'), ...args], { cwd: p.dir, encoding: 'utf8' }).stderr
  t.match(
    stderr(),
    /^wire: compiling the TypeScript into dist\/ \(first start; 10-40 s\)…\nwire: compiled in \d+\.\d s\n$/,
    'the first start',
  )
  t.equal(stderr(), '', 'up to date: silent')
  writeFileSync(join(p.dir, 'apps/a.ts'), 'export const a: number = 3\n')
  const future = new Date(p.stampTime() + 60_000)
  utimesSync(join(p.dir, 'apps/a.ts'), future, future)
  t.match(stderr(), /^wire: compiling the TypeScript into dist\/ \(a source changed; 10-40 s\)…\n/, 'after a change')
  const past = new Date(p.stampTime() - 60_000)
  utimesSync(join(p.dir, 'apps/a.ts'), past, past)
  t.equal(stderr(), '', 'then silent again')
  t.equal(stderr('--force'), '', 'npm run build (--force) prints only what tsc prints')
})

t.test('a compile error fails the build and keeps the stamp stale', async (t) => {
  const p = project(t)
  writeFileSync(join(p.dir, 'apps/a.ts'), 'export const a: number = "not a number"\n')
  t.throws(() => p.build(), 'exit code 1')
  t.notOk(existsSync(join(p.dir, 'dist/.build-stamp')), 'no stamp: the next start tries again')
})

t.test('compiles native/malloc-trim.c when the addon is missing or older; without a C compiler the build still succeeds', async (t) => {
  const p = project(t)
  mkdirSync(join(p.dir, 'native'))
  copyFileSync(projectPath('native/malloc-trim.c'), join(p.dir, 'native/malloc-trim.c'))
  const addon = join(p.dir, 'dist/native/malloc-trim.node')
  const build = (env: Record<string, string> = {}) =>
    execFileSync(process.execPath, [join(p.dir, 'scripts/build.mjs')], {
      cwd: p.dir,
      encoding: 'utf8',
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
  build()
  t.ok(existsSync(addon), 'built')
  const { trim } = createRequire(import.meta.url)(addon) as { trim: () => number }
  t.ok([0, 1].includes(trim()), 'and loads: trim() is malloc_trim(0)')
  rmSync(addon)
  build({ CC: '/nonexistent/cc' })
  t.notOk(existsSync(addon), 'no compiler: no addon')
  t.match(readFileSync(join(p.dir, 'dist/apps/a.js'), 'utf8'), /a = 1/, 'and the TypeScript build is whole')
})
