import { WireError } from '../../libs/shared/domain/index.js'

/**
 * Requests in flight per key (a board, a client address): a key holds an entry only while its
 * count is above zero, and every count is one request in flight (at most the proxy's maxInFlight).
 */
export function slots() {
  const m = new Map<string, number>()
  return {
    count: (k: string) => m.get(k) ?? 0,
    /** One more for `k`, or `refuse()` thrown at `max` (0: no max); the release counts once however often it is called. */
    hold(k: string, max: number, refuse: () => WireError): () => void {
      const n = m.get(k) ?? 0
      if (max > 0 && n >= max) throw refuse()
      m.set(k, n + 1)
      let done = false
      return () => {
        if (done) return
        done = true
        const left = (m.get(k) ?? 1) - 1
        if (left <= 0) m.delete(k)
        else m.set(k, left)
      }
    },
  }
}

/** The proxy's refusals when its slots are taken (docs/aggregator.md "Which refusal is which"). */
export const refusals = {
  /** The process holds READER_MAX_WAITERS proxied requests. */
  processFull: () =>
    new WireError('unavailable', 'this aggregator holds its limit of proxied requests', undefined, { retryAfter: 1, overload: true }),
  /** The board has AGGREGATOR_PROXY_PER_BOARD_MAX requests in flight. */
  boardBusy: (authority: string) =>
    new WireError('unavailable', `this aggregator holds its limit of requests to ${authority}`, undefined, {
      retryAfter: 1,
      overload: true,
    }),
  /** The client's address has AGGREGATOR_PROXY_PER_ADDRESS_MAX requests in flight (its own doing: 429). */
  addressBusy: (max: number) =>
    new WireError('rate_limited', `rate limit reached: ${max} proxied requests in flight from one address`, undefined, { retryAfter: 1 }),
}
