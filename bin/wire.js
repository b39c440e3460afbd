#!/usr/bin/env node
// `npm run -s wire -- …` from a checkout: builds once if dist/ is missing, then runs the command line.
// (Installed, `wire` is the @wire-board/cli package's bin: cli/bin/wire.js.)
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const main = join(root, 'dist/apps/cli/main.js')
if (!existsSync(main)) {
  process.stderr.write('wire: building (first run)…\n')
  execFileSync('npm', ['run', 'build', '--silent'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] })
}
await import(pathToFileURL(main).href)
