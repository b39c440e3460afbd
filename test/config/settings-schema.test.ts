import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import t from 'tap'
import { CLI_SETTINGS, loadConfig, SERVER_GROUPS, SETTING_NAMES, unsetForPublicHost, type Setting } from '../../libs/shared/config/index.js'
import { SETTINGS_TABLES, withSettingsTable } from '../../libs/shared/config/table.js'
import { projectPath } from '../../libs/shared/paths.js'

// Settings are one schema: each declared once in libs/shared/config/settings/ with its parser and
// one sentence; the README's table (and docs/cli.md's) is generated from it, and nothing reads an
// environment variable the schema does not declare.

const server: [string, Setting][] = SERVER_GROUPS.flatMap((g) => Object.entries(g.settings))
const all: [string, Setting][] = [...server, ...Object.entries(CLI_SETTINGS.settings)]

t.test('the committed settings tables are the ones the declarations make', async (t) => {
  for (const table of SETTINGS_TABLES) {
    const committed = readFileSync(projectPath(table.file), 'utf8')
    t.equal(
      withSettingsTable(committed, table),
      committed,
      `${table.file}'s settings table is generated: edit libs/shared/config/settings/, then npm run settings:readme`,
    )
  }
  const readme = readFileSync(projectPath('README.md'), 'utf8')
  const rows = [...readme.matchAll(/^\| `([A-Z][A-Z0-9_]+)` \|/gm)].map((m) => m[1])
  t.same(
    rows.filter((n) => n && SETTING_NAMES.includes(n)),
    SETTING_NAMES,
    "the README's table lists every server setting, once, in order",
  )
})

t.test('each setting is declared once, with one short sentence and a default the table tells truly', async (t) => {
  const names = all.map(([n]) => n)
  t.same(
    names.filter((n, i) => names.indexOf(n) !== i),
    [],
    'no name in two places (the later would win silently)',
  )
  t.ok(server.length >= 90, `${server.length} server settings, ${all.length - server.length} of the command line`)
  const wrong: string[] = []
  for (const [name, s] of all) {
    if (!/^[A-Z][A-Z0-9_]+$/.test(name)) wrong.push(`${name}: not an environment variable's name`)
    const visible = s.about.replace(/\]\([^)]*\)/g, ']') // a link's target is not read
    if (visible.length > 200 || /\.\s+[A-Z`]/.test(s.about) || !/[.)]$/.test(s.about))
      wrong.push(`${name}: not one short sentence (${visible.length} characters; details belong in docs/)`)
    if (s.default === undefined) continue
    if (JSON.stringify(s.schema.parse(s.default)) !== JSON.stringify(s.schema.parse(undefined)))
      wrong.push(`${name}: ${s.default} does not read as unset does`)
    if (s.shown !== undefined && !s.shown.includes(`\`${s.default}\``))
      wrong.push(`${name}: the table's default (${s.shown}) does not name ${s.default}`)
  }
  t.same(wrong, [], `${all.length} settings: names, sentences, defaults`)
})

t.test('★ marks every setting the start banner and wire check-config can name', async (t) => {
  const starred = server.filter(([, s]) => s.star).map(([n]) => n)
  const named = new Set(
    [
      ...unsetForPublicHost(loadConfig({ PUBLIC_WIRE_HOST: 'board.example.com', DATABASE_URL: 'postgres://db/wire' })),
      ...unsetForPublicHost(loadConfig({ PUBLIC_WIRE_HOST: 'board.example.com' })),
    ].map((u) => u.setting),
  )
  t.same(
    [...named].filter((n) => !starred.includes(n)),
    [],
    `named: ${[...named].join(', ')}`,
  )
  t.ok(starred.includes('PUBLIC_WIRE_HOST'), 'and the public host itself')
})

// What a bad value may be: each setting refuses at least one of these, but the four taken as written.
const BAD = ['not-a-value!', '-1', '1.5', '99999999999999999999', '  ', 'x'.repeat(300), 'https://']
const TAKES_ANY = ['WIRE_AUTO_MIGRATE', 'WIRE_DATA_DIR', 'SERVER_HOST', 'WIRE_CONFIG']

t.test('a bad value is one line: the setting and what it expects, in plain words', async (t) => {
  const lenient: string[] = []
  const wrong: string[] = []
  let refusals = 0
  for (const [name] of server) {
    let refused = 0
    for (const value of BAD) {
      let message = ''
      try {
        loadConfig({ [name]: value })
        continue
      } catch (err) {
        message = (err as Error).message
      }
      refused++
      if (
        !new RegExp(`^invalid configuration:\\n  ${name}: must [^\\n]+$`).test(message) ||
        /expected|received|Invalid|Too (small|big)|z\.|\.default\(/.test(message)
      )
        wrong.push(`${name}=${JSON.stringify(value.slice(0, 20))}: ${message}`)
    }
    if (!refused) lenient.push(name)
    refusals += refused
  }
  t.same(wrong, [], `${refusals} refusals, each one line naming its setting and saying what it must be, without zod's words`)
  t.same(lenient, TAKES_ANY, 'every other setting refuses some bad value')
  const two = (() => {
    try {
      return loadConfig({ AGGREGATOR_ALLOW_HOSTS: '10.0.0.0/40', TRUST_PROXY: 'a/b', SERVER_PORT: 'x' })
    } catch (err) {
      return (err as Error).message
    }
  })()
  t.equal(
    two,
    [
      'invalid configuration:',
      '  SERVER_PORT: must be a whole number from 0 to 65535',
      '  TRUST_PROXY: must be 0, a hop count, true, or proxy addresses/CIDRs separated by commas; not: a/b',
      '  AGGREGATOR_ALLOW_HOSTS: must be host names, addresses or CIDRs separated by commas; not: 10.0.0.0/40',
    ].join('\n'),
    'several bad settings: one message, a line each, lists included',
  )
})

/** `process.env.X`, `process.env['X']`, `env.X`, `env['X']`: the names a source reads one by one. */
function namesRead(source: string): string[] {
  return [...source.matchAll(/\b(?:process\.env|env)(?:\.([A-Z][A-Z0-9_]*)\b|\[\s*['"]([A-Z][A-Z0-9_]*)['"]\s*\])/g)].map(
    (m) => (m[1] ?? m[2])!,
  )
}

// The platform's own variables, read to respect them (libs/shared/runtime/run-again.ts): not Wire's settings.
const PLATFORM = ['NODE_OPTIONS', 'MALLOC_ARENA_MAX']
// Where the whole environment is handed on: to the parsers, or to the process a process runs again as.
const WHOLE_ENV = [
  'apps/cli/main.ts',
  'apps/server/first-start.ts',
  'apps/server/network-config.ts',
  'libs/shared/config/index.ts',
  'libs/shared/runtime/run-again.ts',
]

t.test('the code reads no environment variable the schema does not declare', async (t) => {
  t.same(
    namesRead("a(process.env.WIRE_NEW_THING, env['OTHER_ONE'], env.lower, process.env)"),
    ['WIRE_NEW_THING', 'OTHER_ONE'],
    'the scan sees reads',
  )
  const files = (dir: string): string[] =>
    readdirSync(dir).flatMap((f) => (statSync(join(dir, f)).isDirectory() ? files(join(dir, f)) : f.endsWith('.ts') ? [join(dir, f)] : []))
  const sources = ['apps', 'libs'].flatMap((d) => files(projectPath(d)))
  const declared = new Set([...all.map(([n]) => n), ...PLATFORM])
  const undeclared: string[] = []
  const whole: string[] = []
  for (const file of sources) {
    const text = readFileSync(file, 'utf8')
    const rel = relative(projectPath(), file)
    for (const name of namesRead(text)) if (!declared.has(name)) undeclared.push(`${rel}: ${name}`)
    if (/process\.env(?![.[\w])/.test(text)) whole.push(rel)
  }
  t.same(undeclared, [], "every variable read by name is a declared setting (or the platform's own)")
  t.same(whole.sort(), WHOLE_ENV, 'the whole environment goes only to the parsers and to a process run again')
  t.ok(sources.length > 100, `scanned ${sources.length} files`)
})
