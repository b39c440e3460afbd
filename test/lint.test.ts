import { spawn } from 'node:child_process'
import t from 'tap'
import { projectPath } from '../libs/shared/paths.js'

// `biome ci` over the code biome.jsonc selects: the formatter's check (the files are as
// `npm run format` writes them) and the linter, writing nothing. Any finding fails, warnings and
// infos included, and the diagnostics are printed: `npm run format` fixes the formatting,
// `npm run lint` shows the findings.

function biomeCi(): Promise<{ code: number | null; out: string }> {
  const bin = projectPath('node_modules/@biomejs/biome/bin/biome')
  const args = [bin, 'ci', '--colors=off', '--reporter=default', '--error-on-warnings', '--max-diagnostics=100']
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: projectPath(), stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    child.stdout.on('data', (d: Buffer) => (out += d))
    child.stderr.on('data', (d: Buffer) => (out += d))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, out }))
  })
}

t.test('the code is formatted and passes the linter (biome ci)', async (t) => {
  const { code, out } = await biomeCi()
  const checked = Number(/Checked (\d+) files?/.exec(out)?.[1] ?? 0)
  t.ok(checked > 400, `biome checked ${checked} files`)
  const findings = out.match(/^Found \d+ (errors?|warnings?|infos?)\.$/gm) ?? []
  t.same(findings, [], 'no finding of any severity')
  t.equal(code, 0, 'biome ci exits 0')
  if (code !== 0 || findings.length) t.comment(out)
})
