import {
  createMcpHandler,
  isLegacyRequest,
  McpServer,
  WebStandardStreamableHTTPServerTransport,
  type AuthInfo,
  type Implementation,
  type McpRequestContext,
} from '@modelcontextprotocol/server'
import type { AgentCaller, McpAnswer } from '../http/index.js'

/**
 * 2026-07-28 cache hints. A stateless server's tool list and description change only when its
 * configuration does (a restart), and are the same for every caller: clients may keep them for a
 * few minutes and share them.
 */
const CACHE_HINTS = {
  'tools/list': { ttlMs: 300_000, cacheScope: 'public' },
  'server/discover': { ttlMs: 300_000, cacheScope: 'public' },
} as const

/** A server for one request, with the cache hints every stateless Wire MCP server gives: a factory's start. */
export const statelessServer = (info: Implementation, instructions: string) =>
  new McpServer(info, { instructions, cacheHints: CACHE_HINTS })

/**
 * Both protocol eras on one endpoint, chosen per request by the SDK's own classification
 * (`isLegacyRequest`): a request carrying the 2026-07-28 `_meta` envelope goes to the SDK's
 * stateless entry (`createMcpHandler`: server/discover, `_meta` and header validation, resultType,
 * cache hints, the version and method errors); anything else is 2025-era and gets a fresh server on
 * a stateless Streamable HTTP transport answering JSON. Either way a fresh server per request from
 * `factory`, so nothing is shared between requests and any process can answer any request. Every
 * answer is one JSON body: the tools send no progress. The answer goes to libs/shared/http's
 * mcpRoutes, which serves it at /mcp.
 */
export function mcpEndpoint(factory: (caller: AgentCaller) => McpServer): McpAnswer {
  const make = (ctx: McpRequestContext) => {
    const server = factory(callerIn(ctx.authInfo))
    // @NOTE stateless: no session outlives this request, so no tools/list_changed can ever reach a
    // client. The SDK advertises listChanged: true once a tool is registered; say what is true.
    server.server.registerCapabilities({ tools: { listChanged: false } })
    return server
  }
  const modern = createMcpHandler(make, { legacy: 'reject', responseMode: 'auto', maxRequestBodySize: 65_536 })
  const legacy = async (request: Request, parsedBody: unknown, authInfo: AuthInfo) => {
    const server = make({ era: 'legacy', authInfo, requestInfo: request })
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
  return async (request, message, caller) => {
    // the SDK passes authInfo through to the factory untouched; it carries this request's caller
    const authInfo: AuthInfo = { token: '', clientId: '', scopes: [], extra: { caller } }
    return (await isLegacyRequest(request, message))
      ? legacy(request, message, authInfo)
      : modern.fetch(request, { parsedBody: message, authInfo })
  }
}

function callerIn(authInfo: AuthInfo | undefined): AgentCaller {
  const caller = authInfo?.extra?.caller
  if (caller === undefined) throw new Error('mcp: a server was asked for without its request') // never: the endpoint always passes it
  return caller as AgentCaller
}
