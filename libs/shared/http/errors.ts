import type { FastifyBaseLogger, FastifyInstance, FastifyReply } from 'fastify'
import { ZodError } from 'zod'
import { WireError, type WireErrorCode } from '../domain/index.js'

/** The table in docs/protocol.md "Errors"; changed only here. */
export const STATUS: Record<WireErrorCode, number> = {
  invalid_request: 400,
  reply_requires_ref: 400,
  unauthorized: 401,
  insufficient_standing: 402,
  insufficient_bits: 402, // the identity network's transfers
  forbidden: 403,
  unverified_limited: 403,
  not_found: 404,
  method_not_allowed: 405,
  payload_too_large: 413,
  rate_limited: 429,
  internal: 500,
  admin_disabled: 501,
  unavailable: 503,
}

const FASTIFY_CODES: Record<string, [WireErrorCode, string]> = {
  FST_ERR_CTP_BODY_TOO_LARGE: ['payload_too_large', 'request body is too large'],
  FST_ERR_CTP_INVALID_MEDIA_TYPE: ['invalid_request', 'Content-Type must be application/json'],
  FST_ERR_CTP_EMPTY_JSON_BODY: ['invalid_request', 'body is empty'],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: ['invalid_request', 'Content-Length does not match the body'],
}

export function toWireError(err: unknown): WireError {
  if (err instanceof WireError) return err
  if (err instanceof ZodError) {
    const i = err.issues[0]
    return new WireError('invalid_request', i ? `${i.path.join('.') || 'body'}: ${i.message}` : 'invalid request')
  }
  const e = err as { code?: unknown; statusCode?: unknown } | null
  const known = typeof e?.code === 'string' ? FASTIFY_CODES[e.code] : undefined
  if (known) return new WireError(known[0], known[1])
  // any other client error fastify raises (bad URL, bad headers …) is the client's, not ours
  if (typeof e?.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500)
    return new WireError('invalid_request', 'malformed request')
  return new WireError('internal', 'internal error', undefined, { cause: err })
}

/**
 * What a process that sheds load answers (event-loop delay or heap past SHED_*): fastify's
 * under-pressure hook throws one, and the fast path sheds a poll its tail cannot answer with one.
 */
export class Overloaded extends WireError {
  constructor() {
    super('unavailable', 'this process is overloaded; retry shortly', undefined, { retryAfter: 2, overload: true })
  }
}

/** What fastify answers before routing: a path that is not valid percent-encoded UTF-8, an overlong path parameter. */
export function frameworkError(err: unknown): WireError {
  const code = (err as { code?: unknown } | null)?.code
  if (code === 'FST_ERR_BAD_URL') return new WireError('invalid_request', 'the URL is not valid percent-encoded UTF-8')
  // no id is 1000 characters long
  if (code === 'FST_ERR_MAX_PARAM_LENGTH') return new WireError('not_found', 'no such resource')
  return toWireError(err)
}

/** Seconds to wait before a retry, as Retry-After says it: a whole number, at least 1. */
export const retryAfterSeconds = (e: WireError) => (e.retryAfter === undefined ? undefined : Math.max(1, Math.ceil(e.retryAfter)))

/**
 * The one error body of every surface: `{error:{code,message,details?}}`. Surfaces without a
 * Retry-After header (MCP tool errors) carry it in the body as `retryAfter` seconds.
 */
export function errorBody(e: WireError, withRetryAfter = false) {
  const { code, message, details } = e
  const retryAfter = withRetryAfter ? retryAfterSeconds(e) : undefined
  return { error: { code, message, ...(details && { details }), ...(retryAfter && { retryAfter }) } }
}

/** A refusal's cause in one line (an undici or socket error's code and message: which hop failed, and how). */
const causeOf = (c: unknown) => {
  const { code, message } = (c ?? {}) as { code?: unknown; message?: unknown }
  return `${typeof code === 'string' ? `${code}: ` : ''}${typeof message === 'string' ? message.slice(0, 200) : String(c).slice(0, 200)}`
}

/** Logs a failed request as every surface does: a 5xx at error level with its cause, a refusal at debug. */
export function logFailure(log: FastifyBaseLogger, err: unknown, e: WireError, what: Record<string, unknown> = {}) {
  // admin_disabled is a 501 by the protocol's word, but a setting, not a fault: nobody needs to look
  if (e.overload)
    log.warn(
      { code: e.code, reason: e.message, ...(e.cause !== undefined && { cause: causeOf(e.cause) }), ...what },
      'request refused under load',
    )
  else if (STATUS[e.code] >= 500 && e.code !== 'admin_disabled') log.error({ err, code: e.code, ...what }, 'request failed')
  else log.debug({ code: e.code, ...what }, 'request refused')
}

export function sendError(reply: FastifyReply, e: WireError) {
  const retryAfter = retryAfterSeconds(e)
  if (retryAfter !== undefined) reply.header('retry-after', String(retryAfter))
  return reply.code(STATUS[e.code]).type('application/json; charset=utf-8').send(errorBody(e))
}

/** Every error is JSON `{error:{code,message,details?}}`; a 5xx never carries internals (the log does). */
export function installErrorHandler(app: FastifyInstance) {
  app.setErrorHandler((err, req, reply) => {
    const e = toWireError(err)
    logFailure(req.log, err, e)
    return sendError(reply, e)
  })
  app.setNotFoundHandler((req, reply) => {
    const path = req.url.split('?')[0] ?? '/'
    const other = ['GET', 'POST', 'PATCH', 'DELETE', 'PUT'].filter(
      (m) => m !== req.method && app.findRoute({ method: m as 'GET', url: path }),
    )
    if (other.length) {
      reply.header('allow', other.join(', '))
      return sendError(reply, new WireError('method_not_allowed', `${req.method} is not allowed here`, { allow: other }))
    }
    return sendError(reply, new WireError('not_found', `no route for ${req.method} ${path.slice(0, 200)}`))
  })
}
