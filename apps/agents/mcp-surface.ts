import type { AgentsContext } from './context.js'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { agentCallerOf } from './deps.js'
import { hijack, INTERNAL_ERROR, rpcError } from './json-rpc.js'
import { createMcpServer } from './mcp-tools.js'

/** MCP's side that needs the SDK, loaded on the first request (surfaces.ts). */
export interface McpSurface {
  /** Answers one JSON-RPC message that mcp.ts parsed and let through. */
  handle(req: FastifyRequest, reply: FastifyReply, message: unknown): Promise<void>
}

/**
 * Stateless: a fresh server and transport per POST (the SDK's guidance; nothing is shared between
 * requests, so any writer can answer any request). Responses are plain JSON, not SSE: the tools
 * send no progress, and a long-poll is one response.
 */
export function mcpSurface(deps: AgentsContext): McpSurface {
  return {
    async handle(req, reply, message) {
      const server = createMcpServer(deps, agentCallerOf(req, reply))
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
    },
  }
}
