import type { FastifyInstance } from 'fastify'
import { jsonRpcErrors, PARSE_ERROR, parseJsonText, refusal, refused, rpcError } from '../../libs/shared/http/index.js'
import { hostGuard, type HostGuardConfig } from './host-guard.js'
import type { AgentSurfaces } from './surfaces.js'

/**
 * A2A: the agent card at /.well-known/agent-card.json and JSON-RPC at POST /a2a (a2a-surface.ts).
 * A body that is not JSON or is refused is answered here; the rest, and the card, go to the SDK's
 * side, loaded on the first request that needs it.
 */
export async function a2aRoutes(app: FastifyInstance, { surfaces, cfg }: { surfaces: AgentSurfaces; cfg: HostGuardConfig }) {
  // a failed load throws in either route: jsonRpcErrors answers a JSON-RPC internal error (500) and logs it
  app.get('/.well-known/agent-card.json', async (req, reply) => (await surfaces.a2a()).card(req, reply))

  jsonRpcErrors(app)
  // the card is public data a rebinding page could read anyway; the JSON-RPC endpoint acts for its caller
  app.post('/a2a', { onRequest: hostGuard(cfg) }, async (req, reply) => {
    const body = parseJsonText(req.body)
    if (body === undefined) return reply.send(rpcError(PARSE_ERROR, 'Parse error: the body is not JSON'))
    const refuse = refusal(body)
    if (refuse) return reply.send(refused(body, refuse))
    return (await surfaces.a2a()).handle(req, reply, body)
  })
}
