import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify'
import { abortOnClose } from '../../libs/shared/http/index.js'
import type { IdentityResolver } from '../../libs/shared/auth/index.js'
import type { Config } from '../../libs/shared/config/index.js'
import type { ReadSide } from '../../libs/shared/feed/index.js'
import type { PublishDeps } from '../../libs/shared/publish/index.js'

/** The version the MCP server info and the A2A card give for this agent surface. */
export const SERVER_VERSION = '1.0.0'

/** What MCP and A2A need: the one publish path and a read side, both in-process (no HTTP to ourselves). */
export interface AgentDeps {
  readonly cfg: Config
  readonly publish: PublishDeps
  readonly identity: IdentityResolver
  readonly readSide: ReadSide
}

/** One HTTP request to /mcp or /a2a: whose it is, and the signal a long-poll stops on when the client leaves. */
export interface Caller {
  /** The request's Authorization header, handed to publishSignal as is; never logged. */
  readonly authorization: string | string[] | undefined
  /** The presence key for recentPollers: the token's identity, else the client address (as GET /sw/signals). */
  poller(): string
  readonly gone: AbortSignal
  /** The request's logger (carries reqId). */
  readonly log: FastifyBaseLogger
}

export function callerOf(d: AgentDeps, req: FastifyRequest, reply: FastifyReply): Caller {
  const authorization = req.headers.authorization
  return {
    authorization,
    poller: () => d.identity.peek(authorization) ?? `ip:${req.ip}`,
    gone: abortOnClose(reply),
    log: req.log,
  }
}
