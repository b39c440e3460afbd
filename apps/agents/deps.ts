import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify'
import { pageBody, type Caller as ReadCaller } from '../../libs/shared/feed/index.js'
import type { PublishRequest } from '../../libs/shared/publish/index.js'
import type { AgentsContext } from './context.js'

/** The version the MCP server info and the A2A card give for this agent surface. */
export const SERVER_VERSION = '1.0.0'

/** One HTTP request to /mcp or /a2a: whose it is, for the read door, the publish door and the log. */
export interface Caller {
  /** For the read side's door: address, Authorization (never logged) and the signal a long-poll stops on when the client leaves. */
  readonly reads: ReadCaller & { readonly gone: AbortSignal }
  /** The request's logger (carries reqId). */
  readonly log: FastifyBaseLogger
  /** The client's address (req.ip, after TRUST_PROXY) and the request's Idempotency-Key header: publishes here count and dedupe as over HTTP. */
  readonly publishing: PublishRequest
}

export function callerOf(req: FastifyRequest, reply: FastifyReply): Caller {
  return {
    reads: { address: req.ip, authorization: req.headers.authorization, gone: untilClosed(reply) },
    log: req.log,
    publishing: { address: req.ip, idempotencyKey: req.headers['idempotency-key'] },
  }
}

function untilClosed(reply: FastifyReply): AbortSignal {
  const gone = new AbortController()
  reply.raw.once('close', () => gone.abort())
  return gone.signal
}

/** read_signals and read-signals: GET /sw/signals' page through the read side's door, as JSON text. */
export async function readPage(deps: AgentsContext, caller: Caller, raw: Record<string, unknown>): Promise<string> {
  return pageBody(await deps.readSide.read(caller.reads, deps.readSide.query(raw))).toString()
}
