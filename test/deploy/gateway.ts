/**
 * Where a Gateway API HTTPRoute sends a request: the matching rules of
 * gateway.networking.k8s.io/v1 for the match types deploy/k8s uses, written from the HTTPRouteRule
 * `matches` documentation (shipped in @kubernetes-models/gateway-api's HTTPRouteRule.d.ts):
 * - a match holds when its path matches (`Exact`: the whole path; `PathPrefix`: element by
 *   element, so `/mcp` matches `/mcp` and `/mcp/x` but not `/mcpx`; a trailing `/` is ignored) and,
 *   when it names one, the method matches; a rule without matches is a PathPrefix `/` match;
 * - across all rules, precedence goes to an Exact path match, then the PathPrefix with the most
 *   characters, then a method match, then more header and query matches; remaining ties go to the
 *   first rule in list order.
 * Headers, query parameters and RegularExpression paths are not modelled: they throw.
 */

export interface RouteSpec {
  rules: Array<{
    matches?: Array<{ path?: { type?: string; value?: string }; method?: string; headers?: unknown[]; queryParams?: unknown[] }>
    backendRefs?: Array<{ name: string; port?: number }>
  }>
}

export interface Routed {
  /** The backendRefs' Service names of the winning rule. */
  backends: string[]
  rule: number
}

function pathMatches(type: string, value: string, path: string): boolean {
  if (type === 'Exact') return path === value
  if (type === 'PathPrefix') {
    const prefix = value.length > 1 ? value.replace(/\/+$/, '') : value
    return prefix === '/' || path === prefix || path.startsWith(`${prefix}/`)
  }
  throw new Error(`path match type ${type} is not modelled`)
}

/** The rule a request reaches, or null (the Gateway answers 404). `path` excludes the query string. */
export function route(spec: RouteSpec, method: string, path: string): Routed | null {
  const hits: Array<{ rule: number; order: number; exact: boolean; prefixLength: number; hasMethod: boolean }> = []
  spec.rules.forEach((rule, ruleIndex) => {
    const matches = rule.matches?.length ? rule.matches : [{ path: { type: 'PathPrefix', value: '/' } }]
    matches.forEach((m, order) => {
      if (m.headers?.length || m.queryParams?.length) throw new Error('header and query matches are not modelled')
      const type = m.path?.type ?? 'PathPrefix'
      const value = m.path?.value ?? '/'
      if (!pathMatches(type, value, path)) return
      if (m.method && m.method !== method) return
      hits.push({
        rule: ruleIndex,
        order,
        exact: type === 'Exact',
        prefixLength: type === 'PathPrefix' ? value.length : 0,
        hasMethod: !!m.method,
      })
    })
  })
  hits.sort(
    (a, b) =>
      Number(b.exact) - Number(a.exact) ||
      b.prefixLength - a.prefixLength ||
      Number(b.hasMethod) - Number(a.hasMethod) ||
      a.rule - b.rule ||
      a.order - b.order,
  )
  const best = hits[0]
  if (!best) return null
  return { rule: best.rule, backends: (spec.rules[best.rule]!.backendRefs ?? []).map((b) => b.name) }
}
