/**
 * Concurrent calls with the same key share one call in flight; the next call after it settles
 * starts afresh. An answer is never older than the call that made it (no time-based staleness, so a
 * count read right after a change shows it), and however many requests arrive at once, the
 * database runs one query per key at a time. The map holds only calls in flight.
 */
export function singleFlight<A extends unknown[], V>(fn: (...args: A) => Promise<V>, keyOf: (...args: A) => string = () => ''): (...args: A) => Promise<V> {
  const inFlight = new Map<string, Promise<V>>()
  return (...args: A) => {
    const key = keyOf(...args)
    const running = inFlight.get(key)
    if (running) return running
    const p = fn(...args).finally(() => inFlight.delete(key))
    inFlight.set(key, p)
    return p
  }
}
