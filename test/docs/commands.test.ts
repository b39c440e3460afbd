import { readdirSync, readFileSync } from 'node:fs'
import t from 'tap'
import { projectPath } from '../../libs/shared/paths.js'
import { wireVersion } from '../../libs/shared/version.js'
import { run, userEnv } from '../packages/packed.js'

// Checkout or package: `npx wire …` runs the installed @wire-board/cli only where it is installed;
// in a checkout it fetches the registry's unrelated `wire` package. So every paragraph (or code
// block) of the README and docs/ that shows `npx wire` says it is about the installed packages,
// and the checkout's own form, `npm run -s wire -- …`, works as shown.

const DOCS = [
  'README.md',
  ...readdirSync(projectPath('docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
]

t.test('`npx wire` is shown only where the packages are installed', async (t) => {
  const bare: string[] = []
  for (const file of DOCS) {
    const text = readFileSync(projectPath(file), 'utf8')
    // paragraphs, each fenced block whole
    const parts = text.split(/(```[\s\S]*?```)/).flatMap((p) => (p.startsWith('```') ? [p] : p.split(/\n\s*\n/)))
    for (const p of parts)
      if (/npx wire(?!-server)\b/.test(p) && !/install/i.test(p)) bare.push(`${file}: ${p.trim().split('\n')[0]!.slice(0, 100)}`)
  }
  t.same(bare, [], 'each says it needs the installed package')
})

t.test('in a checkout, `npm run -s wire -- …` runs the command line', async (t) => {
  const r = await run('npm', ['run', '-s', 'wire', '--', '--version'], projectPath(), userEnv(), 60_000)
  t.same([r.code, r.out, r.err], [0, `${wireVersion()}\n`, ''], 'npm run -s wire -- --version')
})
