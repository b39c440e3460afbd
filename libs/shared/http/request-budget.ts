import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Caller } from '../caller.js'

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
const FREE_PATHS: ReadonlySet<string> = new Set(['/', '/healthz', '/readyz'])

/** Requests whose unit of the request budget the hook spent (a WeakSet: nothing to clean up, nothing added to fastify's request). */
const paid = new WeakSet<FastifyRequest>()

/**
 * The HTTP door: every request to `app` whose route is not a door itself spends one request from
 * its address's budget before any work (429 rate_limited + Retry-After past it): 404s, discovery,
 * stats, tags, the viewer, /metrics, the agent card, each POST to /mcp and /a2a (`initialize` and
 * `tools/list` included), admin calls. The caller built for such a request says it paid, so a read
 * door behind it (an MCP or A2A read tool) spends nothing more. The address is req.ip, which
 * TRUST_PROXY decides.
 */
export function installRequestBudget(app: FastifyInstance, budget: RequestBudget) {
  if (!budget.readsLimited) return
  app.addHook('onRequest', (req, _reply, done) => {
    if ((req.routeOptions.config as { door?: boolean } | undefined)?.door === true) return done()
    if (FREE_PATHS.has(req.url.split('?', 1)[0]!)) return done()
    budget.read(req.ip).then(() => (paid.add(req), done()), done)
  })
}

/** The caller of a fastify request, for the doors: built the same way by every route and surface. */
export function callerOf(req: FastifyRequest, gone?: AbortSignal): Caller {
  const h = req.headers
  return {
    address: req.ip,
    authorization: h.authorization,
    gone,
    idempotencyKey: h['idempotency-key'],
    traceparent: h.traceparent,
    paid: paid.has(req),
  }
}

/** The caller of one request to a JSON-RPC surface (/mcp, /a2a), with its logger (carries reqId). */
export interface AgentCaller extends Caller {
  /** Aborts when the client leaves: ends a long-poll waiting inside a tool call or task. */
  readonly gone: AbortSignal
  readonly log: FastifyBaseLogger
}

export function agentCallerOf(req: FastifyRequest, reply: FastifyReply): AgentCaller {
  const gone = new AbortController()
  reply.raw.once('close', () => gone.abort())
  return { ...callerOf(req, gone.signal), gone: gone.signal, log: req.log }
}
