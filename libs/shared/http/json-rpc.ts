import type { FastifyInstance } from 'fastify'
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../domain/index.js'
import { retryAfterSeconds, STATUS, toWireError } from './errors.js'

export const PARSE_ERROR = -32700
const INVALID_REQUEST = -32600
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
 * How deep a JSON-RPC body may nest: a signal's own bound (32) plus the envelope around it (MCP
 * `params.arguments.signal`, A2A `params.message.parts[].data`), so a signal nested just too deep
 * still reaches the publish path and gets its `invalid_request`.
 */
const MAX_BODY_DEPTH = MAX_JSON_DEPTH + 16

/**
 * Why a parsed JSON-RPC body is refused before any SDK sees it, or undefined: a batch (one POST,
 * one message, so one request's cost is one call's), or nesting deep enough to overflow the stack
 * of code that recurses over it (the SDKs' validation and cloning, JSON.stringify).
 */
export function refusal(body: unknown): string | undefined {
  if (Array.isArray(body)) return 'Invalid Request: batches are not supported; send one JSON-RPC message per request'
  if (nestsDeeperThan(body, MAX_BODY_DEPTH)) return `Invalid Request: JSON nested deeper than ${MAX_JSON_DEPTH}`
  // a task id that is not a string reaches the SDK's string code (A2A tasks/get, tasks/cancel, …)
  const id = ((body as { params?: unknown } | null)?.params as { id?: unknown } | null | undefined)?.id
  if (id !== undefined && typeof id !== 'string') return 'Invalid Request: params.id must be a string'
  return undefined
}

/** The JSON-RPC error for a refused body, with its id when it has one and the wire code `invalid_request` in `data.code`. */
export function refused(body: unknown, message: string) {
  const rawId = (body as { id?: unknown } | null)?.id
  const id = typeof rawId === 'string' || typeof rawId === 'number' ? rawId : null
  return { ...rpcError(INVALID_REQUEST, message, { code: 'invalid_request' }), id }
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
    const retryAfter = retryAfterSeconds(e)
    if (retryAfter !== undefined) reply.header('retry-after', String(retryAfter))
    return reply.code(http).send(rpcError(status >= 500 ? INTERNAL_ERROR : INVALID_REQUEST, e.message, { code: e.code }))
  })
}
