import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify'
import type { IdentityResolver } from '../../libs/shared/auth/index.js'
import type { Config } from '../../libs/shared/config/index.js'
import { readPageJson, type ReadSide } from '../../libs/shared/feed/index.js'
import type { ClientLimits } from '../../libs/shared/limits/index.js'
import type { PublishDeps, PublishRequest } from '../../libs/shared/publish/index.js'

/** The version the MCP server info and the A2A card give for this agent surface. */
export const SERVER_VERSION = '1.0.0'

/** What MCP and A2A need: the one publish path and a read side, both in-process (no HTTP to ourselves). */
export interface AgentDeps {
  readonly cfg: Config
  readonly publish: PublishDeps
  readonly identity: IdentityResolver
  readonly readSide: ReadSide
  readonly limits: Pick<ClientLimits, 'read' | 'openPoll' | 'pollsLimited'>
}

/** One HTTP request to /mcp or /a2a: whose it is, and the signal a long-poll stops on when the client leaves. */
export interface Caller {
  /** The request's Authorization header, handed to publishSignal as is; never logged. */
  readonly authorization: string | string[] | undefined
  /** The presence key for recentPollers: the token's identity, else the client address (as GET /sw/signals). */
  poller(): string
  /** Aborts when the response closes, answered or not: nothing read after that can reach anyone, so no read outlives its request. */
  readonly gone: AbortSignal
  /** The request's logger (carries reqId). */
  readonly log: FastifyBaseLogger
  /** The client's address (req.ip, after TRUST_PROXY) and the request's Idempotency-Key header: publishes here count and dedupe as over HTTP. */
  readonly publishing: PublishRequest
}

export function callerOf(deps: AgentDeps, req: FastifyRequest, reply: FastifyReply): Caller {
  const authorization = req.headers.authorization
  return {
    authorization,
    poller: () => deps.identity.peek(authorization) ?? `ip:${req.ip}`,
    gone: untilClosed(reply),
    log: req.log,
    publishing: { address: req.ip, idempotencyKey: req.headers['idempotency-key'] },
  }
}

function untilClosed(reply: FastifyReply): AbortSignal {
  const gone = new AbortController()
  reply.raw.once('close', () => gone.abort())
  return gone.signal
}

/**
 * read_signals and read-signals: GET /sw/signals' page, spending the caller's address budgets as
 * the HTTP route does (a read; a long-poll slot while it waits), so the agent surfaces are no way
 * around them.
 */
export async function budgetedRead(deps: AgentDeps, caller: Caller, raw: Record<string, unknown>): Promise<string> {
  const address = caller.publishing.address ?? 'unknown'
  await deps.limits.read(address)
  const waits = deps.limits.pollsLimited && Number(raw['wait'] ?? 0) > 0
  const release = waits ? await deps.limits.openPoll(address) : undefined
  try {
    return await readPageJson(deps.readSide, raw, caller.poller(), caller.gone)
  } finally {
    release?.()
  }
}
