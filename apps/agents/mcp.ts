import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import type { FastifyInstance } from 'fastify'
import { callerOf, type AgentDeps } from './deps.js'
import { hijack, INTERNAL_ERROR, jsonRpcErrors, PARSE_ERROR, parseJsonText, refusal, refused, rpcError } from './json-rpc.js'
import { createMcpServer } from './mcp-tools.js'

/**
 * MCP over Streamable HTTP at /mcp, stateless: a fresh server and transport per POST (the SDK's
 * guidance; nothing is shared between requests, so any writer can answer any request). Responses
 * are plain JSON, not SSE: the tools send no progress, and a long-poll is one response.
 */
export async function mcpRoutes(app: FastifyInstance, { deps }: { deps: AgentDeps }) {
  jsonRpcErrors(app)

  app.post('/mcp', async (req, reply) => {
    const message = parseJsonText(req.body)
    if (message === undefined) return reply.code(400).send(rpcError(PARSE_ERROR, 'Parse error: the body is not JSON'))
    const refuse = refusal(message)
    if (refuse) return reply.code(400).send(refused(message, refuse))
    const server = createMcpServer(deps, callerOf(req, reply))
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true })
    reply.raw.once('close', () => {
      void transport.close()
      void server.close()
    })
    await server.connect(transport)
    hijack(reply)
    try {
      await transport.handleRequest(req.raw, reply.raw, message)
    } catch (err) {
      req.log.error({ err }, 'mcp request failed')
      if (!reply.raw.headersSent) reply.raw.writeHead(500, { 'content-type': 'application/json' })
      if (!reply.raw.writableEnded) reply.raw.end(JSON.stringify(rpcError(INTERNAL_ERROR, 'Internal error')))
    }
  })

  // stateless: no standalone SSE stream to open (GET) and no session to end (DELETE)
  for (const method of ['GET', 'DELETE'] as const) {
    app.route({
      method,
      url: '/mcp',
      handler: async (_req, reply) =>
        reply.code(405).header('allow', 'POST').send(rpcError(-32000, 'Method not allowed: this MCP server is stateless; POST JSON-RPC messages to /mcp')),
    })
  }
}
