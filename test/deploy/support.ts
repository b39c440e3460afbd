import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { parseAllDocuments } from 'yaml'
import { SETTING_NAMES } from '../../libs/shared/config/index.js'
import { projectPath } from '../../libs/shared/paths.js'

// Shared by the deploy tests: reading the manifests, the real list of settings, the Kubernetes
// objects the tests look into. Nothing here talks to a cluster (there is none): see docs/deploy.md.

export const K8S_DIR = projectPath('deploy/k8s')
export const BASE_DIR = join(K8S_DIR, 'base')
export const OVERLAY_DIR = join(K8S_DIR, 'overlays/example')
export const LARGE_DIR = join(K8S_DIR, 'overlays/large-board')
export const EXAMPLES_DIR = join(K8S_DIR, 'examples')

/** A Kubernetes object as parsed from YAML. */
export interface Resource {
  apiVersion: string
  kind: string
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> }
  spec?: any
  data?: Record<string, string>
  stringData?: Record<string, string>
  [k: string]: unknown
}

/** Every YAML document in a file, as plain objects; a syntax error anywhere throws, naming the file. */
export function loadYaml(file: string): unknown[] {
  const docs = parseAllDocuments(readFileSync(file, 'utf8'), { prettyErrors: true, uniqueKeys: true })
  const out: unknown[] = []
  for (const d of Array.isArray(docs) ? docs : []) {
    if (d.errors.length) throw new Error(`${relative(projectPath(), file)}: ${d.errors.map((e) => e.message).join('; ')}`)
    const v = d.toJS()
    if (v !== null && v !== undefined) out.push(v)
  }
  return out
}

/** Every .yaml/.yml file under deploy/k8s. */
export function manifestFiles(dir = K8S_DIR): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((f) => {
      const p = join(dir, f)
      return statSync(p).isDirectory() ? manifestFiles(p) : /\.ya?ml$/.test(f) ? [p] : []
    })
}

export const isKustomization = (doc: unknown) => (doc as { kind?: string } | null)?.kind === 'Kustomization'

/** The names of the real settings: every one declared in libs/shared/config/settings/ for the server's roles. */
export const settingNames = (): string[] => [...SETTING_NAMES]

/** The containers of a Deployment (or any object with a pod template). */
export const containersOf = (r: Resource): any[] => r.spec?.template?.spec?.containers ?? []

export const byKind = (rs: Resource[], kind: string) => rs.filter((r) => r.kind === kind)

export function find(rs: Resource[], kind: string, name: string): Resource {
  const r = rs.find((x) => x.kind === kind && x.metadata.name === name)
  if (!r) throw new Error(`no ${kind}/${name} among ${rs.map((x) => `${x.kind}/${x.metadata.name}`).join(', ')}`)
  return r
}

/** True when every key/value of `selector` is among `labels` (a matchLabels selector). */
export const selects = (selector: Record<string, string> | undefined, labels: Record<string, string> | undefined) =>
  !!selector && Object.keys(selector).length > 0 && Object.entries(selector).every(([k, v]) => labels?.[k] === v)

/**
 * The Prometheus text format as {name, labels, value} samples (enough for prom-client's output:
 * no escaped quotes in our label values, no timestamps).
 */
export function parseMetrics(text: string): Array<{ name: string; labels: Record<string, string>; value: number }> {
  const out: Array<{ name: string; labels: Record<string, string>; value: number }> = []
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{([^}]*)\})? (\S+)$/.exec(line)
    if (!m) continue
    const labels = Object.fromEntries([...(m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="([^"]*)"/g)].map((l) => [l[1]!, l[2]!]))
    out.push({ name: m[1]!, labels, value: Number(m[3]) })
  }
  return out
}

/** The value of one series (all of `labels` must match), or undefined when /metrics does not show it. */
export function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  return parseMetrics(text).find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value
}
