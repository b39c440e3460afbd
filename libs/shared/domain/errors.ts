import type { WireErrorCode } from './wire-types.js'

export type { WireErrorCode }

export class WireError extends Error {
  override name = 'WireError'
  readonly code: WireErrorCode
  readonly details: Record<string, unknown> | undefined
  /** Seconds, sent as `Retry-After` with 429 and 503. */
  readonly retryAfter: number | undefined
  /** A refusal under load (a full process, a read over its time budget): expected, so logged as a warning, not an error. */
  readonly overload: boolean

  constructor(
    code: WireErrorCode,
    message: string = code,
    details?: Record<string, unknown>,
    options?: ErrorOptions & { retryAfter?: number; overload?: boolean },
  ) {
    super(message, options)
    this.code = code
    this.details = details
    this.retryAfter = options?.retryAfter
    this.overload = options?.overload ?? false
  }
}

export const invalid = (message: string, details?: Record<string, unknown>) => new WireError('invalid_request', message, details)
