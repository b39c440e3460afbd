import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative, resolve, dirname } from 'node:path'
import t from 'tap'

// Who may import whom (README "Layout": apps use libs, never each other; domain is pure), checked over every import line in apps/ and libs/.
const root = resolve(import.meta.dirname, '..')
const files = (dir: string): string[] =>
  readdirSync(dir).flatMap((f) => {
    const p = join(dir, f)
    return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : []
  })
const importsOf = (file: string) =>
  [...readFileSync(file, 'utf8').matchAll(/^(?:import|export)[^'"]*from\s+['"]([^'"]+)['"]/gm)].map((m) => m[1]!)

const sources = [...files(join(root, 'apps')), ...files(join(root, 'libs'))]

t.test('every import follows the layering rules', async (t) => {
  const violations: string[] = []
  for (const file of sources) {
    const from = relative(root, file)
    for (const spec of importsOf(file)) {
      const target = spec.startsWith('.') ? relative(root, resolve(dirname(file), spec)) : spec
      const app = /^apps\/([^/]+)\//.exec(from)?.[1]
      const targetApp = /^apps\/([^/]+)\//.exec(target)?.[1]
      // apps/server is the single process: it composes the three roles, and nothing imports it
      if (app && targetApp && app !== targetApp && app !== 'server') violations.push(`${from} → ${target} (an app imports another app)`)
      if (from.startsWith('libs/') && target.startsWith('apps/')) violations.push(`${from} → ${target} (a lib imports an app)`)
      if (from.startsWith('libs/shared/domain/') && !spec.startsWith('.') && !spec.startsWith('node:'))
        violations.push(`${from} → ${spec} (domain imports only node built-ins)`)
      if (from.startsWith('libs/shared/domain/') && spec.startsWith('.') && !target.startsWith('libs/shared/domain/'))
        violations.push(`${from} → ${target} (domain imports nothing outside domain)`)
      if (/^(fastify|@fastify\/)/.test(spec) && from.startsWith('libs/') && !from.startsWith('libs/shared/http/'))
        violations.push(`${from} → ${spec} (only libs/shared/http knows fastify)`)
      if (from.startsWith('libs/') && /process\.env/.test(readFileSync(file, 'utf8')) && !from.startsWith('libs/shared/config/'))
        violations.push(`${from} reads process.env (only config does)`)
    }
  }
  t.same([...new Set(violations)], [], 'no import crosses a boundary')
  t.ok(sources.length > 20, `scanned ${sources.length} files`)
})
