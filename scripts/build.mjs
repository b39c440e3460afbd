#!/usr/bin/env node
// Builds dist/ with tsc, or does nothing when dist/ is newer than every input: each `npm start*`
// runs this first, so a restart costs no compile. `--force` (npm run build) always compiles.
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const stamp = join(root, 'dist', '.build-stamp')
// what tsconfig.build.json compiles, plus what changes its output
const DIRS = ['apps', 'libs', 'bench', 'client/src']
const FILES = ['tsconfig.json', 'tsconfig.build.json', 'client/tsconfig.json', 'package.json', 'package-lock.json']

function newestInput() {
  let newest = 0
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, entry.name)
      if (entry.isDirectory()) walk(p)
      else if (entry.name.endsWith('.ts')) newest = Math.max(newest, statSync(p).mtimeMs)
    }
    newest = Math.max(newest, statSync(dir).mtimeMs) // a deleted or renamed file changes its directory
  }
  for (const d of DIRS) if (existsSync(join(root, d))) walk(join(root, d))
  for (const f of FILES) if (existsSync(join(root, f))) newest = Math.max(newest, statSync(join(root, f)).mtimeMs)
  return newest
}

const force = process.argv.includes('--force')

// native/malloc-trim.c -> dist/native/malloc-trim.node (glibc's malloc_trim for the idle collection,
// libs/shared/runtime/malloc-trim.ts), whenever it is missing or older than its source; without a C compiler
// it is skipped and the process runs without it (bench/results/rss-after-load.md)
const trimSource = join(root, 'native', 'malloc-trim.c')
const trimAddon = join(root, 'dist', 'native', 'malloc-trim.node')
if (existsSync(trimSource) && (force || !existsSync(trimAddon) || statSync(trimAddon).mtimeMs < statSync(trimSource).mtimeMs)) {
  mkdirSync(dirname(trimAddon), { recursive: true })
  try {
    execFileSync(process.env.CC || 'cc', ['-shared', '-fPIC', '-O2', '-o', trimAddon, trimSource], {
      cwd: root,
      stdio: ['ignore', 'ignore', 'pipe'],
    })
  } catch {
    process.stderr.write('build: no C compiler for native/malloc-trim.c: the process will not give freed malloc memory back when idle\n')
  }
}
if (!force && existsSync(stamp) && statSync(stamp).mtimeMs >= newestInput()) process.exit(0)

const started = new Date() // a source saved during the compile makes the next start compile again
// `npm start` and `npm run start:*` compile on their first run (and after a change): say so, it takes a while
if (!force)
  process.stderr.write(`wire: compiling the TypeScript into dist/ (${existsSync(stamp) ? 'a source changed' : 'first start'}; 10-40 s)…\n`)
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')
try {
  // the server, then the client library (client/dist: the npm package, and the viewer's modules)
  for (const project of ['tsconfig.build.json', 'client/tsconfig.json'].filter((p) => existsSync(join(root, p))))
    execFileSync(process.execPath, [tsc, '-p', join(root, project)], { cwd: root, stdio: 'inherit' })
} catch {
  process.exit(1) // tsc has printed the errors
}
writeFileSync(stamp, `${started.toISOString()}\n`)
if (!force) process.stderr.write(`wire: compiled in ${((Date.now() - started.getTime()) / 1000).toFixed(1)} s\n`)
utimesSync(stamp, started, started)
