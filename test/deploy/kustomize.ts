import { existsSync, statSync } from 'node:fs'
import { join, relative, resolve, sep } from 'node:path'
import { parseAllDocuments } from 'yaml'
import { loadYaml, type Resource } from './support.js'

/**
 * A small kustomize renderer for the features deploy/k8s uses, because no kustomize that works
 * offline is published on npm. It is NOT kustomize: anything outside the subset below throws
 * `Unsupported` instead of rendering something kustomize would render differently.
 *
 * Supported (kustomize.config.k8s.io/v1beta1 Kustomization):
 * - `resources`: YAML files (in or below the kustomization's directory, as kustomize's default
 *   load restrictor demands) and directories holding a kustomization (anywhere); duplicate
 *   kind/name/namespace ids are an error, as in kustomize.
 * - `patches`: strategic merge patches given by `path` (in or below the directory) or inline
 *   `patch`, targeted by their own kind/name or by `target` {group, version, kind, name,
 *   namespace}. A patch that matches nothing is an error, as in kustomize. Merge semantics: maps
 *   merge key by key, `null` deletes a key; lists are replaced, except the lists Kubernetes merges
 *   by key in built-in kinds (containers and initContainers, env, volumes, imagePullSecrets by
 *   `name`; volumeMounts by `mountPath`; container ports by `containerPort`; Service ports by `port`;
 *   topologySpreadConstraints by `topologyKey`). Custom resources (HTTPRoute, PodMonitor, …) get
 *   lists replaced, as kustomize does for kinds without a schema.
 * - `namespace`: set on every namespaced object (nothing else is rewritten).
 * - `images`: `name` → `newName` / `newTag` / `digest` in pod templates' containers and initContainers.
 * - `replicas`: `name` → `count` on Deployments and StatefulSets.
 * Unsupported (throws): generators (configMapGenerator, secretGenerator, and their name hashes),
 * name prefixes/suffixes, labels/commonLabels/annotations, components, JSON 6902 patches, patch
 * `options`, label-selector targets, `$patch` directives, replacements, helm charts, cluster-scoped
 * kinds with namespace, and every other field.
 */
export class Unsupported extends Error {
  override name = 'Unsupported'
}

const FIELDS = new Set(['apiVersion', 'kind', 'resources', 'namespace', 'images', 'replicas', 'patches'])
const CLUSTER_SCOPED = new Set(['Namespace', 'ClusterRole', 'ClusterRoleBinding', 'CustomResourceDefinition', 'PersistentVolume', 'StorageClass', 'PriorityClass', 'GatewayClass'])
const WORKLOADS = new Set(['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet', 'Job'])

type Obj = Record<string, any>
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v)
const clone = <T>(v: T): T => structuredClone(v)
const id = (r: Resource) => `${r.kind}/${r.metadata?.namespace ?? '~'}/${r.metadata?.name}`

/** Renders the kustomization in `dir` (like `kustomize build dir`, within the subset above). */
export function render(dir: string): Resource[] {
  const file = ['kustomization.yaml', 'kustomization.yml', 'Kustomization'].map((f) => join(dir, f)).find((f) => existsSync(f))
  if (!file) throw new Error(`${dir}: no kustomization.yaml`)
  const docs = loadYaml(file)
  if (docs.length !== 1 || !isObj(docs[0])) throw new Error(`${file}: expected one Kustomization document`)
  const k = docs[0]
  if (k.apiVersion !== 'kustomize.config.k8s.io/v1beta1' || k.kind !== 'Kustomization') throw new Error(`${file}: not a kustomize.config.k8s.io/v1beta1 Kustomization`)
  for (const key of Object.keys(k)) if (!FIELDS.has(key)) throw new Unsupported(`${file}: '${key}' is not supported by this renderer`)

  const out: Resource[] = []
  const add = (r: Resource, from: string) => {
    if (!isObj(r) || typeof r.apiVersion !== 'string' || typeof r.kind !== 'string' || typeof r.metadata?.name !== 'string')
      throw new Error(`${from}: a resource needs apiVersion, kind and metadata.name`)
    if (out.some((x) => id(x) === id(r))) throw new Error(`${from}: ${id(r)} is already registered`)
    out.push(r)
  }
  for (const entry of list(k.resources, 'resources', file)) {
    if (typeof entry !== 'string') throw new Error(`${file}: resources entries are paths`)
    if (/^[a-z]+:\/\//i.test(entry)) throw new Unsupported(`${file}: remote resource ${entry}`)
    const p = resolve(dir, entry)
    if (existsSync(p) && statSync(p).isDirectory()) for (const r of render(p)) add(r, p)
    else for (const r of loadYaml(inRoot(dir, entry, file))) add(r as Resource, p)
  }

  for (const p of list(k.patches, 'patches', file)) applyPatch(out, p, dir, file)
  if (k.namespace !== undefined) {
    if (typeof k.namespace !== 'string') throw new Error(`${file}: namespace must be a string`)
    for (const r of out) if (!CLUSTER_SCOPED.has(r.kind)) r.metadata.namespace = k.namespace
  }
  for (const img of list(k.images, 'images', file)) setImage(out, img, file)
  for (const rep of list(k.replicas, 'replicas', file)) {
    if (!isObj(rep) || typeof rep.name !== 'string' || !Number.isInteger(rep.count)) throw new Error(`${file}: replicas entries are {name, count}`)
    const targets = out.filter((r) => (r.kind === 'Deployment' || r.kind === 'StatefulSet') && r.metadata.name === rep.name)
    if (!targets.length) throw new Error(`${file}: replicas: no Deployment or StatefulSet named ${rep.name}`)
    for (const r of targets) r.spec = { ...r.spec, replicas: rep.count }
  }
  return out
}

function list(v: unknown, field: string, file: string): any[] {
  if (v === undefined || v === null) return []
  if (!Array.isArray(v)) throw new Error(`${file}: ${field} must be a list`)
  return v
}

/** A file a kustomization loads must be in or below its directory (kustomize's LoadRestrictionsRootOnly). */
function inRoot(dir: string, entry: string, file: string): string {
  const p = resolve(dir, entry)
  const rel = relative(resolve(dir), p)
  if (rel.startsWith('..') || rel.startsWith(sep)) throw new Error(`${file}: ${entry} is not in or below ${dir} (kustomize refuses it)`)
  if (!existsSync(p)) throw new Error(`${file}: ${entry} does not exist`)
  return p
}

function applyPatch(out: Resource[], p: unknown, dir: string, file: string) {
  if (!isObj(p)) throw new Error(`${file}: patches entries are objects`)
  for (const key of Object.keys(p)) if (!['path', 'patch', 'target'].includes(key)) throw new Unsupported(`${file}: patch field '${key}'`)
  if ((p.path === undefined) === (p.patch === undefined)) throw new Error(`${file}: a patch has either path or patch`)
  const docs: unknown[] = p.path !== undefined ? loadYaml(inRoot(dir, p.path, file)) : (loadYamlText(p.patch, file) as unknown[])
  for (const doc of docs) {
    if (Array.isArray(doc)) throw new Unsupported(`${file}: JSON 6902 patches`)
    if (!isObj(doc)) throw new Error(`${file}: a patch is a YAML object`)
    const target = p.target ?? { kind: doc.kind, name: doc.metadata?.name, ...(doc.metadata?.namespace && { namespace: doc.metadata.namespace }) }
    if (!isObj(target)) throw new Error(`${file}: target must be an object`)
    for (const key of Object.keys(target))
      if (!['group', 'version', 'kind', 'name', 'namespace'].includes(key)) throw new Unsupported(`${file}: patch target field '${key}'`)
    const hits = out.filter(
      (r) =>
        (target.kind === undefined || r.kind === target.kind) &&
        (target.name === undefined || r.metadata.name === target.name) &&
        (target.namespace === undefined || r.metadata.namespace === target.namespace) &&
        (target.group === undefined || groupOf(r.apiVersion) === target.group) &&
        (target.version === undefined || r.apiVersion.split('/').at(-1) === target.version),
    )
    if (!hits.length) throw new Error(`${file}: patch ${p.path ?? '(inline)'} matches no resource (${JSON.stringify(target)})`)
    for (const r of hits) {
      const { apiVersion: _a, kind: _k, metadata, ...rest } = doc
      const { name: _n, namespace: _ns, ...meta } = (metadata ?? {}) as Obj
      const merged = merge(r, { ...rest, ...(Object.keys(meta).length && { metadata: meta }) }, [], builtIn(r.apiVersion))
      Object.assign(r, merged)
    }
  }
}

function loadYamlText(text: unknown, file: string): unknown[] {
  if (typeof text !== 'string') throw new Error(`${file}: an inline patch is a string`)
  return parseAllDocuments(text).map((d) => d.toJS())
}

const groupOf = (apiVersion: string) => (apiVersion.includes('/') ? apiVersion.split('/')[0]! : '')
/** Built-in API groups (core, apps, autoscaling, policy, …, *.k8s.io but not the Gateway API CRDs): their lists follow Kubernetes' patch merge keys. */
function builtIn(apiVersion: string): boolean {
  const g = groupOf(apiVersion)
  return !g.includes('.') || (g.endsWith('.k8s.io') && !g.startsWith('gateway.'))
}

/** The patch merge key Kubernetes declares for a list at this path, for the lists our manifests patch. */
function mergeKey(path: string[]): string | null {
  const last = path.at(-1)
  if (last === 'containers' || last === 'initContainers' || last === 'env' || last === 'volumes' || last === 'imagePullSecrets') return 'name'
  if (last === 'volumeMounts') return 'mountPath'
  if (last === 'topologySpreadConstraints') return 'topologyKey'
  if (last === 'ports') return path.at(-2) === 'spec' ? 'port' : 'containerPort' // Service spec.ports vs a container's ports
  return null
}

/** Strategic merge (the subset in the header comment). */
export function merge(base: unknown, patch: unknown, path: string[], strategic: boolean): unknown {
  if (isObj(patch)) {
    const out: Obj = isObj(base) ? clone(base) : {}
    for (const [k, v] of Object.entries(patch)) {
      if (k.startsWith('$')) throw new Unsupported(`patch directive ${k} at ${path.join('.') || '(root)'}`)
      if (v === null) delete out[k]
      else out[k] = merge(out[k], v, [...path, k], strategic)
    }
    return out
  }
  if (Array.isArray(patch)) {
    const key = strategic ? mergeKey(path) : null
    if (!key || !Array.isArray(base)) return clone(patch)
    const out = clone(base)
    for (const item of patch) {
      if (!isObj(item) || item[key] === undefined) throw new Error(`a patch item of ${path.join('.')} needs its merge key '${key}'`)
      const at = out.findIndex((b: unknown) => isObj(b) && b[key] === item[key])
      if (at >= 0) out[at] = merge(out[at], item, path, strategic)
      else out.push(clone(item))
    }
    return out
  }
  return patch
}

/** `name[:tag][@digest]` → its parts; the name may hold a registry with a port. */
function splitImage(image: string) {
  const [rest, digest] = image.split('@') as [string, string | undefined]
  const colon = rest.lastIndexOf(':')
  const hasTag = colon > rest.lastIndexOf('/')
  return { name: hasTag ? rest.slice(0, colon) : rest, tag: hasTag ? rest.slice(colon + 1) : undefined, digest }
}

function setImage(out: Resource[], img: unknown, file: string) {
  if (!isObj(img) || typeof img.name !== 'string') throw new Error(`${file}: images entries need a name`)
  for (const key of Object.keys(img)) if (!['name', 'newName', 'newTag', 'digest'].includes(key)) throw new Unsupported(`${file}: images field '${key}'`)
  for (const r of out) {
    if (!WORKLOADS.has(r.kind)) continue
    const spec = r.spec?.template?.spec
    for (const c of [...(spec?.containers ?? []), ...(spec?.initContainers ?? [])]) {
      const cur = splitImage(c.image)
      if (cur.name !== img.name) continue
      const name = img.newName ?? cur.name
      c.image = img.digest ? `${name}@${img.digest}` : `${name}${img.newTag ?? cur.tag ? `:${img.newTag ?? cur.tag}` : ''}${!img.newTag && cur.digest ? `@${cur.digest}` : ''}`
    }
  }
}
