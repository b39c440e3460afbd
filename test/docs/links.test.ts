import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import t from 'tap'
import { projectPath } from '../../libs/shared/paths.js'
import { settingNames } from '../deploy/support.js'

// The repository stands on its own: every link in the README, docs/ and the benchmark studies
// (bench/results/*.md, which docs/benchmarks.md sums up) resolves to a file (and heading) inside it,
// except the external references listed below on purpose; nothing cites the design notes outside
// the repository or issue numbers; every setting is in the README's table.

/** External links the docs make on purpose: the projects Wire is built on and the standards it follows. */
const EXTERNAL = new Set([
  'https://github.com/timgit/pg-boss', // docs/sweeper.md: the job library
])

const root = projectPath()
const walk = (dir: string): string[] =>
  readdirSync(dir).flatMap((f) => {
    const p = join(dir, f)
    return statSync(p).isDirectory() ? walk(p) : [p]
  })
const DOCS = [
  projectPath('README.md'),
  ...[projectPath('docs'), projectPath('bench/results')].flatMap((d) => walk(d).filter((f) => f.endsWith('.md'))),
]

/** Markdown without fenced code blocks and inline code: links inside code are examples, not links. */
const prose = (md: string) => md.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/`[^`\n]*`/g, '')

/** Inline links `[text](target)` and autolinks `<https://…>`. */
function linksOf(md: string): string[] {
  const text = prose(md)
  return [...text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g), ...text.matchAll(/<(https?:\/\/[^>\s]+)>/g)].map((m) => m[1]!)
}

/** GitHub's heading anchors: lower-cased, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchorsOf(md: string): Set<string> {
  const seen = new Map<string, number>()
  const out = new Set<string>()
  for (const m of md.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const text = m[1]!.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    const base = text
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-')
    const n = seen.get(base) ?? 0
    seen.set(base, n + 1)
    out.add(n ? `${base}-${n}` : base)
  }
  return out
}

t.test('the link checker reads links and anchors as GitHub does', async (t) => {
  t.same(linksOf('[a](b.md) `[c](d.md)` <https://x.example>\n```\n[e](f.md)\n```\n[g](h.md#i "title")'), [
    'b.md',
    'h.md#i',
    'https://x.example',
  ])
  t.same(
    [...anchorsOf('# Publishing: `POST /sw/signals`\n## Node.js and the toolchain\n## A\n## A\n```\n# not a heading\n```')],
    ['publishing-post-swsignals', 'nodejs-and-the-toolchain', 'a', 'a-1'],
  )
})

t.test('every link in the README, docs/ and bench/results/ stays in the repository and resolves', async (t) => {
  t.ok(DOCS.length >= 8, `${DOCS.length} documents`)
  let checked = 0
  for (const file of DOCS) {
    const name = relative(root, file)
    const md = readFileSync(file, 'utf8')
    for (const link of linksOf(md)) {
      checked++
      if (/^[a-z][a-z0-9+.-]*:/i.test(link)) {
        t.ok(EXTERNAL.has(link), `${name}: ${link} is a deliberate external reference`)
        continue
      }
      const [path, anchor] = link.split('#') as [string, string | undefined]
      const target = path === '' ? file : resolve(dirname(file), decodeURIComponent(path))
      const rel = relative(root, target)
      if (!t.ok(!rel.startsWith('..') && existsSync(target), `${name}: ${link} is a file in the repository`)) continue
      if (anchor !== undefined && target.endsWith('.md'))
        t.ok(anchorsOf(readFileSync(target, 'utf8')).has(anchor), `${name}: ${link} names a heading of ${rel}`)
    }
  }
  t.ok(checked > 50, `${checked} links checked`)
})

t.test('nothing points outside the repository: no ../shared, no issue numbers', async (t) => {
  const sources = ['apps', 'libs', 'test', 'bench', 'scripts', 'deploy', 'docs', '.ci']
    .flatMap((d) => (existsSync(projectPath(d)) ? walk(projectPath(d)) : []))
    .concat(['README.md', 'Dockerfile', 'package.json'].map((f) => projectPath(f)))
    .filter((f) => /\.(ts|mjs|md|sh|ya?ml|json)$|Dockerfile$|\/run$/.test(f) && !f.endsWith('links.test.ts'))
  const bad: string[] = []
  for (const f of sources) {
    const text = readFileSync(f, 'utf8')
    for (const [i, line] of text.split('\n').entries())
      if (/\.\.\/shared\/|\b(ARCHITECTURE|FACTS|STYLE)\.md\b|decisions\.md|wire-v1-spec/.test(line) || /\bissue #?\d+/i.test(line))
        bad.push(`${relative(root, f)}:${i + 1}: ${line.trim()}`)
  }
  t.same(bad, [], 'README, docs, code and comments cite files in the repository')
})

t.test("every setting the code reads is in the README's settings table", async (t) => {
  const readme = readFileSync(projectPath('README.md'), 'utf8')
  const documented = new Set([...readme.matchAll(/^\| `([A-Z][A-Z0-9_]+)` \|/gm)].map((m) => m[1]!))
  const settings = settingNames()
  t.ok(settings.length >= 25, `${settings.length} settings`)
  t.same(
    settings.filter((s) => !documented.has(s)),
    [],
    'each with its default',
  )
})
