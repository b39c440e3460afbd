import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Test } from 'tap'
import { stringify } from 'yaml'
import { EXAMPLES_DIR, loadYaml } from './support.js'

/**
 * Prometheus's own tools (Debian's `prometheus` package ships `prometheus` and `promtool`; .ci/run
 * installs it). Without them the tests that need them fail with this message instead of testing
 * something else.
 */
export function requireTool(name: 'promtool' | 'prometheus'): string {
  const r = spawnSync(name, ['--version'], { encoding: 'utf8' })
  if (r.error) throw new Error(`${name} is not installed: apt-get install prometheus (Debian's package ships prometheus and promtool)`)
  return name
}

export function promtool(args: string[], cwd?: string) {
  const r = spawnSync(requireTool('promtool'), args, { encoding: 'utf8', cwd, timeout: 60_000 })
  return { code: r.status, out: `${r.stdout}${r.stderr}` }
}

/** The alert rules of examples/prometheusrule.yaml, as Prometheus loads a rule file. */
export const ruleGroups = (): Array<{
  name: string
  rules: Array<{ alert: string; expr: string; labels?: Record<string, string>; annotations?: Record<string, string> }>
}> => (loadYaml(join(EXAMPLES_DIR, 'prometheusrule.yaml'))[0] as any).spec.groups

/** A temporary directory holding `files` (name → YAML-able value), removed at the end of `t`. */
export function tempFiles(t: Test, files: Record<string, unknown>): string {
  const dir = mkdtempSync(join(tmpdir(), 'wire-prom-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  for (const [name, value] of Object.entries(files)) writeFileSync(join(dir, name), typeof value === 'string' ? value : stringify(value))
  return dir
}
