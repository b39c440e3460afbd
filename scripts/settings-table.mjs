#!/usr/bin/env node
// Writes the settings tables of README.md and docs/cli.md from the declarations in
// libs/shared/config/settings/ (compiled: run it as `npm run settings:readme`, which builds first).
// `--check` writes nothing and exits 1 when a committed table differs from its declarations.
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const { SETTINGS_TABLES, withSettingsTable } = await import(join(root, 'dist/libs/shared/config/table.js'))
const check = process.argv.includes('--check')
let stale = 0
for (const table of SETTINGS_TABLES) {
  const path = join(root, table.file)
  const text = readFileSync(path, 'utf8')
  const generated = withSettingsTable(text, table)
  if (generated === text) continue
  stale++
  if (check)
    process.stderr.write(
      `${table.file}: its settings table differs from libs/shared/config/settings/ (npm run settings:readme writes it)\n`,
    )
  else {
    writeFileSync(path, generated)
    process.stderr.write(`${table.file}: settings table written\n`)
  }
}
if (check && stale) process.exit(1)
