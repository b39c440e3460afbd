import {
  createMcpHandler,
  isLegacyRequest,
  WebStandardStreamableHTTPServerTransport,
  type AuthInfo,
  type McpRequestContext,
} from '@modelcontextprotocol/server'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { AgentsContext } from './context.js'
import { agentCallerOf, type AgentCaller } from './deps.js'
import { INTERNAL_ERROR, rpcError } from './json-rpc.js'
import { createMcpServer } from './mcp-tools.js'

/** MCP's side that needs the SDK, loaded on the first request (surfaces.ts). */
export interface McpSurface {
  /** Answers one JSON-RPC message that mcp.ts parsed and let through. */
  handle(req: FastifyRequest, reply: FastifyReply, message: unknown): Promise<void>
}

/** Headers of the SDK's answer that describe its own hop, not the answer: fastify sets its own. */
const HOP = new Set(['connection', 'content-length', 'keep-alive', 'transfer-encoding'])

/**
 * Both protocol eras on one endpoint, chosen per request by the SDK's own classification
 * (`isLegacyRequest`): a request carrying the 2026-07-28 `_meta` envelope goes to the SDK's
 * stateless entry (`createMcpHandler`: server/discover, `_meta` and header validation, resultType,
 * cache hints, the version and method errors); anything else is 2025-era and gets a fresh server on
 * a stateless Streamable HTTP transport answering JSON, as before. Either way a fresh server per
 * request from one factory, so nothing is shared between requests and any agents process can
 * answer any request. Every answer is one JSON body: the tools send no progress.
 */
export function mcpSurface(deps: AgentsContext): McpSurface {
  const factory = (ctx: McpRequestContext) => createMcpServer(deps, callerIn(ctx.authInfo))
  const modern = createMcpHandler(factory, { legacy: 'reject', responseMode: 'auto', maxRequestBodySize: 65_536 })
  const legacy = async (request: Request, parsedBody: unknown, authInfo: AuthInfo) => {
    const server = factory({ era: 'legacy', authInfo, requestInfo: request })
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true })
    await server.connect(transport)
    try {
      // the answer is a whole JSON body, so the server's work is over when it resolves
      return await transport.handleRequest(request, { parsedBody, authInfo })
    } finally {
      void transport.close()
      void server.close()
    }
  }
  return {
    async handle(req, reply, message) {
      const caller = agentCallerOf(req, reply)
      const request = webRequest(deps.cfg.baseUrl, req, caller.gone)
      // the SDK passes authInfo through to the factory untouched; it carries this request's caller
      const authInfo: AuthInfo = { token: '', clientId: '', scopes: [], extra: { caller } }
      try {
        const answer = (await isLegacyRequest(request, message))
          ? await legacy(request, message, authInfo)
          : await modern.fetch(request, { parsedBody: message, authInfo })
        reply.code(answer.status)
        for (const [k, v] of answer.headers) if (!HOP.has(k)) reply.header(k, v)
        await reply.send(await answer.text())
      } catch (err) {
        req.log.error({ err }, 'mcp request failed')
        if (!reply.sent) await reply.code(500).send(rpcError(INTERNAL_ERROR, 'Internal error'))
      }
    },
  }
}

function callerIn(authInfo: AuthInfo | undefined): AgentCaller {
  const caller = authInfo?.extra?.caller
  if (caller === undefined) throw new Error('mcp: a server was asked for without its request') // never: handle() always passes it
  return caller as AgentCaller
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
