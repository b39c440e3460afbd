import { execFileSync } from 'node:child_process'
import { parseAllDocuments } from 'yaml'
import type { Resource } from './support.js'

/**
 * `kubectl kustomize <dir>`: the real renderer, built into kubectl. Without kubectl on the PATH
 * the deploy tests fail with this message instead of testing something else (.ci/run checks for it).
 */
export function render(dir: string): Resource[] {
  let out: string
  try {
    out = execFileSync('kubectl', ['kustomize', dir], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 16 * 1024 * 1024 })
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { stderr?: string }
    if (e.code === 'ENOENT')
      throw new Error(
        'kubectl is not installed: the deploy tests render deploy/k8s with `kubectl kustomize` (kubectl ≥ 1.14; https://kubernetes.io/docs/tasks/tools/)',
      )
    throw new Error(`kubectl kustomize ${dir} failed: ${e.stderr?.trim() || e.message}`)
  }
  return parseAllDocuments(out).flatMap((d) => {
    if (d.errors.length) throw new Error(`kubectl kustomize ${dir}: ${d.errors.map((x) => x.message).join('; ')}`)
    const v = d.toJS() as Resource | null
    return v ? [v] : []
  })
}
