import type { FastifyInstance, FastifyReply } from 'fastify'
import { STATUS, toWireError } from '../../libs/shared/http/index.js'

export const PARSE_ERROR = -32700
export const INVALID_REQUEST = -32600
export const INTERNAL_ERROR = -32603

/** A JSON-RPC error response that answers no particular request (`id: null`). */
export const rpcError = (code: number, message: string, data?: unknown) => ({
  jsonrpc: '2.0' as const,
  id: null,
  error: { code, message, ...(data !== undefined && { data }) },
})

/** A request body (text, as createHttpApp delivers JSON) → its JSON value, or `undefined` when it is not JSON. */
export function parseJsonText(body: unknown): unknown {
  if (typeof body !== 'string') return undefined
  try {
    return JSON.parse(body)
  } catch {
    return undefined
  }
}

/**
 * Errors raised before a JSON-RPC handler runs (wrong media type, body over 64 KiB) are JSON-RPC
 * errors here too, with the HTTP status fastify chose; `data.code` is the wire error code.
 */
export function jsonRpcErrors(app: FastifyInstance) {
  app.setErrorHandler((err, req, reply) => {
    const e = toWireError(err)
    const status = STATUS[e.code]
    if (status >= 500) req.log.error({ err, code: e.code }, 'request failed')
    const given = (err as { statusCode?: unknown }).statusCode
    const http = typeof given === 'number' && given >= 400 && given < 500 ? given : status
    return reply.code(http).send(rpcError(status >= 500 ? INTERNAL_ERROR : INVALID_REQUEST, e.message, { code: e.code }))
  })
}

/**
 * Hands the raw response to an SDK that writes it itself. Headers fastify already set on the reply
 * (CORS) would be lost with it, so they are copied onto the raw response first.
 */
export function hijack(reply: FastifyReply) {
  for (const [k, v] of Object.entries(reply.getHeaders())) if (v !== undefined) reply.raw.setHeader(k, v as string | string[] | number)
  reply.hijack()
}
