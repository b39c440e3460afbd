/**
 * Concurrent calls with the same key share one call in flight; the next call after it settles
 * starts afresh. An answer is never older than the call that made it (no time-based staleness, so a
 * count read right after a change shows it), and however many requests arrive at once, the
 * database runs one query per key at a time. The map holds only calls in flight.
 */
export function singleFlight<A extends unknown[], V>(
  fn: (...args: A) => Promise<V>,
  keyOf: (...args: A) => string = () => '',
): (...args: A) => Promise<V> {
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

/** Keys a shared answer keeps at most; past it, the least recently used goes. */
const SHARED_KEYS_MAX = 64

/**
 * A single flight whose answer is also reused while `version()` (the feed's head and change
 * count) is unchanged and it is younger than `maxAgeMs`: an aggregate over every active signal
 * then runs at most once per second per key however many requests, with random parameters, ask,
 * and a publish, pin or removal shows in the next answer. At most SHARED_KEYS_MAX keys are kept.
 */
export function sharedAnswer<A extends unknown[], V>(
  fn: (...args: A) => Promise<V>,
  version: () => string,
  maxAgeMs: number,
  keyOf: (...args: A) => string = () => '',
): (...args: A) => Promise<V> {
  const kept = new Map<string, { version: string; at: number; value: Promise<V> }>()
  const once = singleFlight(fn, keyOf)
  return (...args: A) => {
    const key = keyOf(...args)
    const v = version()
    const hit = kept.get(key)
    if (hit && hit.version === v && Date.now() - hit.at < maxAgeMs) return hit.value
    const value = once(...args)
    kept.delete(key)
    if (kept.size >= SHARED_KEYS_MAX) kept.delete(kept.keys().next().value!)
    kept.set(key, { version: v, at: Date.now(), value })
    value.catch(() => kept.get(key)?.value === value && kept.delete(key)) // a failure is not kept
    return value
  }
}
