import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify'
import type { Caller } from '../../libs/shared/caller.js'
import { pageBody } from '../../libs/shared/feed/index.js'
import { callerOf } from '../../libs/shared/http/index.js'
import type { AgentsContext } from './context.js'

/** The version the MCP server info and the A2A card give for this agent surface. */
export const SERVER_VERSION = '1.0.0'

/** One HTTP request to /mcp or /a2a: the request's caller (for the read, publish and register doors) and its logger (carries reqId). */
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

/** read_signals and read-signals: GET /sw/signals' page through the read side's door, as JSON text. */
export async function readPage(deps: AgentsContext, caller: AgentCaller, raw: Record<string, unknown>): Promise<string> {
  return pageBody(await deps.readSide.read(caller, deps.readSide.query(raw))).toString()
}
