import { assertStorable, invalid } from '../domain/index.js'

/** A JSON request body (delivered as text by createHttpApp) → a plain object, with the same safety checks as publish. */
export function parseJsonBody(body: unknown): Record<string, unknown> {
  if (typeof body !== 'string' || body.trim() === '') throw invalid('body must be a JSON object')
  let v: unknown
  try {
    v = JSON.parse(body)
  } catch {
    throw invalid('body is not valid JSON')
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw invalid('body must be a JSON object')
  assertStorable(v)
  return v as Record<string, unknown>
}

/** Sends JSON text that was assembled by hand (signals are serialised once and reused). */
export const sendJsonText = (reply: import('fastify').FastifyReply, json: string, status = 200) =>
  reply.code(status).type('application/json; charset=utf-8').send(json)

/** Aborts when the client goes away before its answer was sent (a long-poll stops waiting at once). */
export function abortOnClose(reply: import('fastify').FastifyReply): AbortSignal {
  const gone = new AbortController()
  reply.raw.once('close', () => !reply.raw.writableEnded && gone.abort())
  return gone.signal
}
