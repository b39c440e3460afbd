import type { WireError } from '../../libs/shared/domain/index.js'

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
