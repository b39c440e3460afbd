import type { FastifyInstance, FastifyRequest, onRequestHookHandler } from 'fastify'
import { INTERNAL_ERROR, jsonRpcErrors, PARSE_ERROR, parseJsonText, refusal, refused, rpcError } from './json-rpc.js'
import { type AgentCaller, agentCallerOf } from './request-budget.js'

/** Answers one JSON-RPC message that the route parsed and let through (libs/shared/mcp's endpoint: both protocol eras). */
export type McpAnswer = (request: Request, message: unknown, caller: AgentCaller) => Promise<Response>

export interface McpRoutesOptions {
  /** The public base URL: the SDK sees each message as a POST to `${baseUrl}/mcp`. */
  baseUrl: string
  /** The side that needs the SDK, asked for by each message that needs it (the caller loads it once). */
  load(): Promise<McpAnswer>
  /** Runs first on every /mcp request (the board's DNS-rebinding guard). */
  onRequest?: onRequestHookHandler
}

/** Headers of the SDK's answer that describe its own hop, not the answer: fastify sets its own. */
const HOP = new Set(['connection', 'content-length', 'keep-alive', 'transfer-encoding'])

/**
 * MCP over Streamable HTTP at /mcp, stateless: the board's and the aggregator's. What needs no SDK
 * answers here: a body that is not JSON, a refused one, GET and DELETE, errors before the handler
 * (as JSON-RPC errors); the rest goes to `load()`'s answer as a web Request, and its Response is
 * sent as one JSON body.
 */
export async function mcpRoutes(app: FastifyInstance, o: McpRoutesOptions) {
  jsonRpcErrors(app)
  if (o.onRequest) app.addHook('onRequest', o.onRequest)

  app.post('/mcp', async (req, reply) => {
    const message = parseJsonText(req.body)
    if (message === undefined) return reply.code(400).send(rpcError(PARSE_ERROR, 'Parse error: the body is not JSON'))
    const refuse = refusal(message)
    if (refuse) return reply.code(400).send(refused(message, refuse))
    // a failed load throws here: jsonRpcErrors answers a JSON-RPC internal error (500) and logs it
    const answer = await o.load()
    const caller = agentCallerOf(req, reply)
    try {
      const res = await answer(webRequest(o.baseUrl, req, caller.gone), message, caller)
      reply.code(res.status)
      for (const [k, v] of res.headers) if (!HOP.has(k)) reply.header(k, v)
      await reply.send(await res.text())
    } catch (err) {
      req.log.error({ err }, 'mcp request failed')
      if (!reply.sent) await reply.code(500).send(rpcError(INTERNAL_ERROR, 'Internal error'))
    }
  })

  // stateless: no standalone SSE stream to open (GET) and no session to end (DELETE)
  for (const method of ['GET', 'DELETE'] as const) {
    app.route({
      method,
      url: '/mcp',
      handler: async (_req, reply) =>
        reply
          .code(405)
          .header('allow', 'POST')
          .send(rpcError(-32000, 'Method not allowed: this MCP server is stateless; POST JSON-RPC messages to /mcp')),
    })
  }
}

/** The fastify request as the web Request the SDK takes (its body is the text fastify read; the JSON goes as parsedBody). */
function webRequest(baseUrl: string, req: FastifyRequest, signal: AbortSignal): Request {
  const headers = new Headers()
  for (const [k, v] of Object.entries(req.headers)) {
    if (v === undefined || HOP.has(k)) continue
    headers.set(k, Array.isArray(v) ? v.join(', ') : v)
  }
  return new Request(`${baseUrl}/mcp`, { method: 'POST', headers, body: typeof req.body === 'string' ? req.body : '', signal })
}
