import type { FastifyInstance } from 'fastify'

/** What the hook needs of libs/shared/limits' clientLimits (structural: http imports no limits). */
export interface RequestBudget {
  readsLimited: boolean
  read(address: string): Promise<void>
}

/**
 * Route config of a route whose handler goes through a door that spends the caller's budgets
 * itself (the read side's `read`/`byId`/`thread`, the publish path): the request hook leaves it
 * to that door, so nothing is charged twice.
 */
export const DOOR = Object.freeze({ door: true })

/**
 * Answered without budget, on purpose: liveness and readiness probes come from the orchestrator's
 * one address per node (kubelet), and refusing them would restart healthy pods. Each costs nothing
 * or at most one cached check (health.ts).
 */
export const FREE_PATHS: ReadonlySet<string> = new Set(['/', '/healthz', '/readyz'])

/**
 * Every request to `app` that no door budgets spends one request from its address's budget before
 * any work (429 rate_limited + Retry-After past it): 404s, discovery, stats, tags, the viewer,
 * /metrics, the agent card, each POST to /mcp and /a2a (`initialize` and `tools/list` included),
 * admin calls. The address is req.ip, which TRUST_PROXY decides.
 */
export function installRequestBudget(app: FastifyInstance, budget: RequestBudget) {
  if (!budget.readsLimited) return
  app.addHook('onRequest', (req, _reply, done) => {
    if ((req.routeOptions.config as { door?: boolean } | undefined)?.door === true) return done()
    if (FREE_PATHS.has(req.url.split('?', 1)[0]!)) return done()
    budget.read(req.ip).then(() => done(), done)
  })
}
