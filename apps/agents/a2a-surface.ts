import type { AgentsContext } from './context.js'
import { createHash, randomUUID } from 'node:crypto'
import { A2A_VERSION_HEADER } from '@a2a-js/sdk'
import { LegacyJsonRpcTransportHandler } from '@a2a-js/sdk/compat/v0_3/server'
import { UnsupportedOperationError } from '@a2a-js/sdk/errors'
import { defaultServerCallContextBuilder, JsonRpcTransportHandler, validateVersion, type User } from '@a2a-js/sdk/server'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { bearerTokenOrNull } from '../../libs/shared/auth/index.js'
import { agentCallerOf, INTERNAL_ERROR, sendJsonText } from '../../libs/shared/http/index.js'
import { agentCard, cardJson, isLegacyVersion, legacyCardJson } from './agent-card.js'
import { CALLER_KEY, WireAgentExecutor } from './a2a-executor.js'
import { WireRequestHandler } from './request-handler.js'
import { BoundedTaskStore } from './task-store.js'

const TASKS = { maxBytes: 16 * 1024 * 1024, maxAgeMs: 10 * 60_000 }

/** A2A's side that needs the SDK, loaded on the first request (surfaces.ts). */
export interface A2aSurface {
  /** GET /.well-known/agent-card.json */
  card(req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply>
  /** POST /a2a: one JSON-RPC message that a2a.ts parsed and let through. */
  handle(req: FastifyRequest, reply: FastifyReply, body: unknown): Promise<FastifyReply>
}

/**
 * The SDK's request handler and JSON-RPC transport handlers (1.0, and 0.3 for clients that send
 * no A2A-Version), on fastify without express. One task store per process.
 */
export function a2aSurface(deps: AgentsContext): A2aSurface {
  const card = agentCard(deps.cfg)
  // an anonymous caller's task belongs to its request alone (TokenUser): nobody can get or list it later
  const store = new BoundedTaskStore(
    TASKS,
    (ctx) => ctx.user?.userName ?? '',
    undefined,
    (ctx) => ctx.user?.isAuthenticated === true,
  )
  const handler = new WireRequestHandler(card, store, new WireAgentExecutor(deps))
  const v1 = new JsonRpcTransportHandler(handler)
  const v03 = new LegacyJsonRpcTransportHandler(handler)
  return {
    async card(req, reply) {
      reply.header('vary', A2A_VERSION_HEADER).header('cache-control', 'public, max-age=60')
      const named = agentCard(deps.cfg, (await deps.readSide.board.meta()).name) // a rename shows at once
      return sendJsonText(reply, isLegacyVersion(headerOf(req.headers, A2A_VERSION_HEADER)) ? legacyCardJson(named) : cardJson(named))
    },
    async handle(req, reply, body) {
      const version = headerOf(req.headers, A2A_VERSION_HEADER)
      const legacy = isLegacyVersion(version)
      const toError = legacy ? LegacyJsonRpcTransportHandler.mapToLegacyJSONRPCError : JsonRpcTransportHandler.mapToJSONRPCError
      const rawId = (body as { id?: unknown } | null)?.id
      const id = typeof rawId === 'string' || typeof rawId === 'number' ? rawId : null
      try {
        const caller = agentCallerOf(req, reply)
        const context = defaultServerCallContextBuilder({
          extensions: undefined,
          user: new TokenUser(req.headers.authorization),
          headers: req.headers,
          ...(version !== undefined && { requestedVersion: version }),
        })
        context.state.set(CALLER_KEY, caller)
        validateVersion(context.requestedVersion, card, 'JSONRPC')
        const out = await (legacy ? v03 : v1).handle(body as Record<string, unknown>, context)
        if (!isStream(out)) return reply.send(withoutInternals(out, req.log))
        // the card offers no streaming, so the handler's stream fails on its first step; answer that error
        const first = await out.next().then(
          () => new UnsupportedOperationError('Streaming is not supported.'),
          (err: unknown) => err,
        )
        void out.return(undefined)
        return reply.send({ jsonrpc: '2.0', id, error: toError(first) })
      } catch (err) {
        const error = toError(err)
        if (error.code === INTERNAL_ERROR) req.log.error({ err }, 'a2a request failed')
        return reply.code(error.code === INTERNAL_ERROR ? 500 : 200).send({ jsonrpc: '2.0', id, error })
      }
    },
  }
}

/**
 * The SDK's user: tasks are scoped to it, so only the token that made a task can get it. Keyed by a
 * hash, never the token. Without a token, a key of this request alone.
 */
class TokenUser implements User {
  private readonly key: string | null
  private readonly anonymous = `anonymous:${randomUUID()}`
  constructor(authorization: string | string[] | undefined) {
    const token = bearerTokenOrNull(authorization)
    this.key = token === null ? null : `token:${createHash('sha256').update(token).digest('hex').slice(0, 32)}`
  }
  get isAuthenticated() {
    return this.key !== null
  }
  get userName() {
    return this.key ?? this.anonymous
  }
}

/**
 * The SDK answers an unexpected Error with its raw message as an internal error (`taskId.trim is
 * not a function` for a task id that is not a string): the message goes to the log, the client
 * gets "Internal error".
 */
function withoutInternals(out: unknown, log: { error(o: object, m: string): void }): unknown {
  const error = (out as { error?: { code?: unknown; message?: unknown } } | null)?.error
  if (error?.code !== INTERNAL_ERROR || error.message === 'Internal error') return out
  log.error({ detail: error.message }, 'a2a request failed')
  return { ...(out as object), error: { code: INTERNAL_ERROR, message: 'Internal error' } }
}

function headerOf(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const v = headers[name.toLowerCase()]
  return Array.isArray(v) ? v[0] : v
}

const isStream = (v: unknown): v is AsyncGenerator<unknown> =>
  typeof v === 'object' && v !== null && typeof (v as AsyncGenerator).next === 'function' && Symbol.asyncIterator in v
