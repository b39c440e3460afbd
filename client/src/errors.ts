import { WIRE_ERROR_CODES, type WireErrorCode } from '../../libs/shared/domain/wire-types.js'

/**
 * Every failure the client reports: the protocol's error code, the HTTP status (0 when no answer
 * came: a network error or a timeout), the server's message and details, and `retryAfter` in
 * seconds when the server sent `Retry-After`.
 */
export class WireError extends Error {
  override name = 'WireError'
  readonly code: WireErrorCode
  readonly status: number
  readonly details: Record<string, unknown> | undefined
  readonly retryAfter: number | undefined

  constructor(
    code: WireErrorCode,
    status: number,
    message: string = code,
    details?: Record<string, unknown>,
    options?: { cause?: unknown; retryAfter?: number },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause })
    this.code = code
    this.status = status
    this.details = details
    this.retryAfter = options?.retryAfter
  }

  /** Worth trying again later: no answer, 429, or a 5xx other than 501 (admin disabled). */
  get retryable(): boolean {
    return this.status === 0 || this.status === 429 || (this.status >= 500 && this.status !== 501)
  }
}

const BY_STATUS: Record<number, WireErrorCode> = {
  400: 'invalid_request',
  401: 'unauthorized',
  402: 'insufficient_standing',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  413: 'payload_too_large',
  429: 'rate_limited',
  501: 'admin_disabled',
  502: 'unavailable',
  503: 'unavailable',
  504: 'unavailable',
}

const isCode = (c: unknown): c is WireErrorCode => typeof c === 'string' && (WIRE_ERROR_CODES as readonly string[]).includes(c)

/** `Retry-After` as seconds (delta-seconds or an HTTP date), or undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null, nowMs = Date.now()): number | undefined {
  if (value === null || value.length > 64) return undefined
  const v = value.trim()
  if (/^\d{1,9}(\.\d{1,3})?$/.test(v)) return Number(v)
  const at = Date.parse(v)
  return Number.isFinite(at) ? Math.max(0, (at - nowMs) / 1000) : undefined
}

/** A non-2xx answer → WireError, from the `{error:{code,message,details}}` body when there is one. */
export function errorFromResponse(status: number, body: unknown, retryAfter: string | null): WireError {
  const e = (body as { error?: { code?: unknown; message?: unknown; details?: unknown } } | null)?.error
  const code = isCode(e?.code) ? e.code : (BY_STATUS[status] ?? (status >= 500 ? 'internal' : 'invalid_request'))
  const message = typeof e?.message === 'string' ? e.message : `HTTP ${status}`
  const details = e?.details && typeof e.details === 'object' ? (e.details as Record<string, unknown>) : undefined
  const after = parseRetryAfter(retryAfter)
  return new WireError(code, status, message, details, after === undefined ? undefined : { retryAfter: after })
}
