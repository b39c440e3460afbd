import { join } from 'node:path'
import ts from 'typescript'
import { HTTPRoute } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/HTTPRoute'
import { PodMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PodMonitor'
import { PrometheusRule } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PrometheusRule'
import { Deployment } from 'kubernetes-models/apps/v1/Deployment'
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler'
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget'
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap'
import { Secret } from 'kubernetes-models/v1/Secret'
import { Service } from 'kubernetes-models/v1/Service'
import { projectPath } from '../../libs/shared/paths.js'

// Validation of Kubernetes objects with the kubernetes-models libraries, in two parts:
// 1. `schemaErrors`: the JSON schemas they ship (Kubernetes' OpenAPI, the Gateway API and
//    Prometheus Operator CRDs): required fields, types, enums, patterns.
// 2. `unknownFieldErrors`: those schemas allow unknown fields (as Kubernetes' OpenAPI does), while
//    `kubectl apply` refuses them (strict field validation) or a CRD silently prunes them. So each
//    object is also type-checked by TypeScript against the same libraries' interfaces, whose excess
//    property check reports any field the API does not have (a typo like `livenesProbe`).

interface Model {
  new (data: any): { validate(): void }
}
/** apiVersion/kind → the model class, and the module and interface of its TypeScript type. */
const MODELS: Record<string, { model: Model; module: string; type: string }> = {
  'v1/ConfigMap': { model: ConfigMap, module: 'kubernetes-models/v1/ConfigMap', type: 'IConfigMap' },
  'v1/Secret': { model: Secret, module: 'kubernetes-models/v1/Secret', type: 'ISecret' },
  'v1/Service': { model: Service, module: 'kubernetes-models/v1/Service', type: 'IService' },
  'apps/v1/Deployment': { model: Deployment, module: 'kubernetes-models/apps/v1/Deployment', type: 'IDeployment' },
  'autoscaling/v2/HorizontalPodAutoscaler': {
    model: HorizontalPodAutoscaler,
    module: 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler',
    type: 'IHorizontalPodAutoscaler',
  },
  'policy/v1/PodDisruptionBudget': {
    model: PodDisruptionBudget,
    module: 'kubernetes-models/policy/v1/PodDisruptionBudget',
    type: 'IPodDisruptionBudget',
  },
  'gateway.networking.k8s.io/v1/HTTPRoute': {
    model: HTTPRoute,
    module: '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/HTTPRoute',
    type: 'IHTTPRoute',
  },
  'monitoring.coreos.com/v1/PodMonitor': {
    model: PodMonitor,
    module: '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PodMonitor',
    type: 'IPodMonitor',
  },
  'monitoring.coreos.com/v1/PrometheusRule': {
    model: PrometheusRule,
    module: '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PrometheusRule',
    type: 'IPrometheusRule',
  },
}

const modelOf = (o: any) => MODELS[`${o?.apiVersion}/${o?.kind}`]

/** Schema errors of one object; an apiVersion/kind we have no schema for is an error too. */
export function schemaErrors(o: unknown): string[] {
  const m = modelOf(o)
  if (!m) return [`no schema for ${(o as any)?.apiVersion}/${(o as any)?.kind}`]
  try {
    new m.model(o).validate()
    return []
  } catch (err) {
    return [(err as Error).message]
  }
}

/**
 * Fields the API does not have, for many objects at once (one TypeScript program: ~seconds).
 * Returns one message per unknown or mistyped field, prefixed with the object's label.
 */
export function unknownFieldErrors(objs: Array<{ label: string; obj: unknown }>): string[] {
  const lines: string[] = []
  const owners: Array<{ from: number; label: string }> = [] // the first line of each object's declaration
  const imports = new Set<string>()
  objs.forEach(({ label, obj }, i) => {
    const m = modelOf(obj)
    if (!m) throw new Error(`${label}: no type for ${(obj as any)?.apiVersion}/${(obj as any)?.kind}`)
    imports.add(`import type { ${m.type} as T_${m.type} } from '${m.module}'`)
    owners.push({ from: lines.length, label })
    lines.push(...`export const o${i}: T_${m.type} = ${JSON.stringify(obj, null, 1)}`.split('\n'))
  })
  const header = [...imports]
  const text = [...header, ...lines].join('\n')
  // a virtual file inside the project, so node_modules resolve as they do for the tests
  const file = join(projectPath('test/deploy'), '__manifests_typecheck__.ts')
  const options: ts.CompilerOptions = {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: [],
  }
  const host = ts.createCompilerHost(options)
  const { getSourceFile, fileExists, readFile } = host
  host.getSourceFile = (name, lang, ...rest) =>
    name === file ? ts.createSourceFile(name, text, lang) : getSourceFile.call(host, name, lang, ...rest)
  host.fileExists = (name) => name === file || fileExists.call(host, name)
  host.readFile = (name) => (name === file ? text : readFile.call(host, name))
  const program = ts.createProgram({ rootNames: [file], options, host })
  const source = program.getSourceFile(file)!
  const diags = [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)]
  return diags.map((d) => {
    const line = d.start === undefined ? -1 : source.getLineAndCharacterOfPosition(d.start).line - header.length
    const owner = [...owners].reverse().find((o) => o.from <= line)
    return `${owner?.label ?? '(header)'}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`
  })
}
