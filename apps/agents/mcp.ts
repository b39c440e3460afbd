import type { FastifyInstance } from 'fastify'
import { hostGuard, type HostGuardConfig } from './host-guard.js'
import { jsonRpcErrors, PARSE_ERROR, parseJsonText, refusal, refused, rpcError } from './json-rpc.js'
import type { AgentSurfaces } from './surfaces.js'

/**
 * MCP over Streamable HTTP at /mcp, stateless (mcp-surface.ts). What needs no SDK answers here: a
 * body that is not JSON, a refused one, GET and DELETE; the rest goes to the SDK's side, loaded on
 * the first message that needs it.
 */
export async function mcpRoutes(app: FastifyInstance, { surfaces, cfg }: { surfaces: AgentSurfaces; cfg: HostGuardConfig }) {
  jsonRpcErrors(app)
  app.addHook('onRequest', hostGuard(cfg))

  app.post('/mcp', async (req, reply) => {
    const message = parseJsonText(req.body)
    if (message === undefined) return reply.code(400).send(rpcError(PARSE_ERROR, 'Parse error: the body is not JSON'))
    const refuse = refusal(message)
    if (refuse) return reply.code(400).send(refused(message, refuse))
    // a failed load throws here: jsonRpcErrors answers a JSON-RPC internal error (500) and logs it
    await (await surfaces.mcp()).handle(req, reply, message)
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
