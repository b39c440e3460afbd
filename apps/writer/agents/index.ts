import type { FastifyInstance } from 'fastify'
import type { ReadSide } from '../../../libs/shared/feed/index.js'
import type { WriterContext } from '../context.js'
import { a2aRoutes } from './a2a.js'
import type { AgentDeps } from './deps.js'
import { mcpRoutes } from './mcp.js'

/**
 * The agent surfaces (docs/agents.md): MCP at /mcp, A2A at /a2a with its card at
 * /.well-known/agent-card.json. They publish through the writer's one publish path and read
 * through `reads` (the writer's own read side, or the reader's in the single process).
 */
export async function agentRoutes(app: FastifyInstance, { ctx, reads }: { ctx: WriterContext; reads: ReadSide }) {
  const deps: AgentDeps = { cfg: ctx.cfg, publish: ctx.publish, identity: ctx.identity, reads }
  await app.register(mcpRoutes, { deps })
  await app.register(a2aRoutes, { deps })
  // long-polls waiting inside a tool call or a task answer now, not at their deadline (idempotent)
  app.addHook('preClose', async () => reads.close())
}
