import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { basename, dirname, join, relative, resolve } from 'node:path'
import t from 'tap'
import { CLIENT_ENTRY } from '../apps/reader/view-assets.js'

// The layout rules, checked over every import in apps/, libs/ and bench/: who may import whom, one
// module entered through its index.ts, no import circles, and the naming the layout relies on. The
// client library (client/src) and the viewer's scripts (apps/reader/view/*.js) are in the circle
// check too.

const root = resolve(import.meta.dirname, '..')
const files = (dir: string, ext = '.ts'): string[] =>
  readdirSync(dir).flatMap((f) => {
    const p = join(dir, f)
    return statSync(p).isDirectory() ? files(p, ext) : p.endsWith(ext) ? [p] : []
  })

interface Import {
  from: string // repository-relative .ts path
  spec: string // as written
  target: string // repository-relative: a .ts file for relative imports, else the package name
  typeOnly: boolean
}

/** Every import and re-export of a file: static, side-effect and dynamic, multi-line included. */
function importsOf(file: string): Import[] {
  const text = readFileSync(file, 'utf8')
  const from = relative(root, file)
  const found = [
    ...[...text.matchAll(/^(?:import|export)(\s+type\b)?([^'"]*?)\bfrom\s+['"]([^'"]+)['"]/gm)].map((m) => ({
      spec: m[3]!,
      // `import type …`, or braces in which every name is `type X`
      typeOnly: !!m[1] || (/^\s*\{\s*type\s[^}]*\}\s*$/.test(m[2]!) && !/,\s*(?!type\s)\w/.test(m[2]!)),
    })),
    ...[...text.matchAll(/^import\s+['"]([^'"]+)['"]/gm)].map((m) => ({ spec: m[1]!, typeOnly: false })),
    ...[...text.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)].map((m) => ({ spec: m[1]!, typeOnly: false })),
  ]
  return found.map(({ spec, typeOnly }) => ({
    from,
    spec,
    typeOnly,
    // a .ts source imports its siblings as .js (NodeNext); the viewer's plain scripts are .js files
    target: spec.startsWith('.')
      ? relative(root, resolve(dirname(file), spec)).replace(/\.js$/, file.endsWith('.ts') ? '.ts' : '.js')
      : spec,
  }))
}

const sources = ['apps', 'libs', 'bench'].flatMap((d) => files(join(root, d)))
const imports = sources.flatMap(importsOf)
/** The client library and the viewer's browser scripts: checked for circles (and for imports that resolve). */
const clientSources = [...files(join(root, 'client/src')), ...files(join(root, 'apps/reader/view'), '.js')]
const clientImports = clientSources.flatMap(importsOf)

/** `libs/shared/<module>/…` (or `libs/shared/<module>.ts`) → the module's name. */
const sharedModule = (path: string) => /^libs\/shared\/([^/.]+)/.exec(path)?.[1]

// Which shared module may import which. `(type)` allows `import type` only: the config object
// reaches a module as an argument, never by loading the environment itself.
const MAY_IMPORT: Record<string, string[]> = {
  domain: [],
  log: [],
  metrics: [],
  paths: [],
  clock: [],
  caller: [],
  deadlines: ['clock'],
  // process tuning: the Node floor, running again with V8's flags, the idle collection, malloc_trim
  runtime: ['metrics', 'paths', 'config (type)'],
  config: ['domain'],
  tracing: ['log (type)', 'config (type)'],
  lifecycle: ['log', 'runtime', 'database-hint'],
  'database-hint': [],
  version: ['paths'],
  db: ['domain', 'log', 'metrics', 'paths', 'config (type)'],
  bus: ['domain', 'log', 'metrics', 'config (type)'],
  auth: ['domain', 'log', 'metrics', 'clock', 'config (type)', 'limits (type)'],
  http: ['domain', 'log', 'metrics', 'deadlines', 'config (type)', 'caller (type)'],
  limits: ['domain', 'metrics'],
  infra: ['db', 'bus', 'auth', 'domain', 'log', 'metrics', 'limits', 'tracing', 'paths', 'config (type)'],
  feed: [
    'db',
    'bus',
    'domain',
    'log',
    'metrics',
    'deadlines',
    'tracing',
    'config (type)',
    'infra (type)',
    'auth (type)',
    'limits (type)',
    'caller (type)',
  ],
  publish: ['db', 'bus', 'auth', 'domain', 'log', 'metrics', 'limits', 'tracing', 'config (type)', 'infra (type)', 'caller (type)'],
  // the one root: composes the others for the roles a process serves (docs/architecture.md "One root")
  context: ['infra', 'feed', 'publish', 'auth', 'db', 'config (type)', 'log (type)'],
  api: ['domain', 'http'],
  // the MCP SDK's side of /mcp (both protocol eras), behind libs/shared/http's mcpRoutes: the board's and the aggregator's
  mcp: ['http'],
  views: ['db', 'bus', 'domain', 'log', 'metrics', 'config (type)'],
}

// Inner-file imports that exist today and are on their way out. Nothing else may be added here.
// the bench reads the idle collection's own threshold; runtime's index loads idle-gc.ts only when a
// process collects (it brings node:inspector and prom-client), so it cannot re-export it
const KNOWN_INNER_IMPORTS: string[] = ['bench/lib/rss-watch.ts → libs/shared/runtime/idle-gc.ts']

t.test('every import follows the layering rules', async (t) => {
  const violations: string[] = []
  for (const { from, spec, target, typeOnly } of imports) {
    const app = /^apps\/([^/]+)\//.exec(from)?.[1]
    const targetApp = /^apps\/([^/]+)\//.exec(target)?.[1]
    // apps/server is the single process: it composes the other apps, and nothing imports it
    if (app && targetApp && app !== targetApp && app !== 'server') violations.push(`${from} → ${target} (an app imports another app)`)
    if (targetApp === 'server' && app !== 'server') violations.push(`${from} → ${target} (nothing imports the single process)`)
    if (from.startsWith('libs/') && (target.startsWith('apps/') || target.startsWith('bench/')))
      violations.push(`${from} → ${target} (a lib imports an app)`)
    if (/^(fastify|@fastify\/)/.test(spec) && from.startsWith('libs/') && !from.startsWith('libs/shared/http/'))
      violations.push(`${from} → ${spec} (only libs/shared/http knows fastify)`)
    if (from.startsWith('libs/shared/domain/') && !spec.startsWith('.') && !spec.startsWith('node:'))
      violations.push(`${from} → ${spec} (domain imports only node built-ins)`)
    const m = sharedModule(from)
    const tm = sharedModule(target)
    if (m && tm && m !== tm) {
      const allowed = MAY_IMPORT[m]
      if (!allowed) violations.push(`${from} (libs/shared/${m} is not in the layering table: add it)`)
      else if (!allowed.includes(tm) && !(typeOnly && allowed.includes(`${tm} (type)`)))
        violations.push(`${from} → ${target} (${m} may import ${allowed.join(', ') || 'nothing of ours'})`)
    }
    // another module is entered through its index.ts (single-file modules: lifecycle.ts, paths.ts)
    if (tm && m !== tm && !/^libs\/shared\/[^/]+(\/index)?\.ts$/.test(target) && !KNOWN_INNER_IMPORTS.includes(`${from} → ${target}`))
      violations.push(`${from} → ${target} (import libs/shared/${tm} through its index.ts)`)
    if (spec.startsWith('.') && !spec.endsWith('.js')) violations.push(`${from} → ${spec} (relative imports end in .js)`)
    if (spec.startsWith('.') && !existsSync(join(root, target))) violations.push(`${from} → ${spec} (no such file)`)
  }
  for (const file of sources) {
    const from = relative(root, file)
    const text = readFileSync(file, 'utf8')
    // runtime/run-again.ts hands the process's own environment (plus MALLOC_ARENA_MAX) to the process it runs again
    if (
      from.startsWith('libs/') &&
      /process\.env/.test(text) &&
      !from.startsWith('libs/shared/config/') &&
      from !== 'libs/shared/runtime/run-again.ts'
    )
      violations.push(`${from} reads process.env (only config does)`)
    if (/^export\s+default\b/m.test(text)) violations.push(`${from} has a default export (named exports only)`)
    if (!/^[a-z0-9]+(-[a-z0-9]+)*(\.d)?\.ts$/.test(basename(from))) violations.push(`${from} (file names are kebab-case)`)
  }
  t.same([...new Set(violations)], [], 'no import crosses a boundary')
  t.ok(sources.length > 20, `scanned ${sources.length} files, ${imports.length} imports`)
})

/** Strongly connected components of the file graph with more than one file (or a file importing itself). */
function circles(edges: Map<string, Set<string>>): string[][] {
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const on = new Set<string>()
  const out: string[][] = []
  let next = 0
  const visit = (v: string) => {
    index.set(v, next)
    low.set(v, next++)
    stack.push(v)
    on.add(v)
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w)
        low.set(v, Math.min(low.get(v)!, low.get(w)!))
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!))
    }
    if (low.get(v) === index.get(v)) {
      const scc: string[] = []
      let w: string
      do {
        w = stack.pop()!
        on.delete(w)
        scc.push(w)
      } while (w !== v)
      if (scc.length > 1 || edges.get(v)?.has(v)) out.push(scc.sort())
    }
  }
  for (const v of [...edges.keys()].sort()) if (!index.has(v)) visit(v)
  return out
}

/** One circle through a component, for the message: a → b → … → a. */
function circleThrough(scc: string[], edges: Map<string, Set<string>>): string {
  const inside = new Set(scc)
  const path = [scc[0]!]
  const seen = new Set(path)
  for (;;) {
    const here = path.at(-1)!
    const next = [...(edges.get(here) ?? [])].filter((w) => inside.has(w)).sort()
    const back = next.find((w) => seen.has(w))
    if (back !== undefined) return [...path.slice(path.indexOf(back)), back].join(' → ')
    path.push(next[0]!)
    seen.add(next[0]!)
  }
}

// Circles that exist today and are on their way out. Nothing else may be added here.
const KNOWN_CIRCLES: string[][] = []

t.test('client/ and the viewer import only files that exist', async (t) => {
  // the viewer's one import of the client library names the compiled module the reader serves
  // beside the page (view-assets.ts CLIENT_ENTRY, built into client/dist), not a file of the tree
  const served = (i: Import) => i.from === 'apps/reader/view/wire.js' && i.spec === `./${CLIENT_ENTRY}`
  const missing = clientImports
    .filter((i) => i.spec.startsWith('.') && !served(i) && !existsSync(join(root, i.target)))
    .map((i) => `${i.from} → ${i.spec}`)
  t.same(missing, [], 'every relative import resolves')
  t.ok(clientSources.length > 15, `scanned ${clientSources.length} client and viewer files`)
})

t.test('the import graph has no circles', async (t) => {
  const edges = new Map<string, Set<string>>()
  for (const { from, target, spec } of [...imports, ...clientImports]) {
    if (!spec.startsWith('.')) continue
    if (!edges.has(from)) edges.set(from, new Set())
    edges.get(from)!.add(target) // type-only imports count: a circle of types is still a circle to read
  }
  const found = circles(edges)
  const known = new Set(KNOWN_CIRCLES.map((c) => [...c].sort().join(' ')))
  const unexpected = found.filter((scc) => !known.has(scc.join(' '))).map((scc) => circleThrough(scc, edges))
  for (const scc of found.filter((s) => known.has(s.join(' ')))) t.comment(`known circle: ${circleThrough(scc, edges)}`)
  t.same(unexpected, [], 'no import circles')
  const gone = KNOWN_CIRCLES.filter((c) => !found.some((scc) => scc.join(' ') === [...c].sort().join(' ')))
  t.same(gone, [], 'every known circle still exists (delete the ones that are gone)')
  t.ok(edges.size > 20, `${edges.size} files import others`)
})
