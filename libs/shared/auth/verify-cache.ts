import { createHash } from 'node:crypto'

/** A bearer token's cache key: its SHA-256. The token itself is never kept, logged or used as a key. */
export const tokenKey = (token: string) => createHash('sha256').update(token).digest('base64url')

/** What the identity network said about a token: accepted (with what it maps to) or rejected. */
export type Verdict<T> = { ok: true; value: T } | { ok: false }

export interface VerifyCacheOptions {
  /** How long an accepted verdict is reused. */
  validMs: number
  /** How long a rejected verdict is reused (short: a token may be registered a moment later). */
  rejectedMs: number
  /** Oldest entries are dropped beyond this; tokens are caller-chosen, so the map must be bounded. */
  maxEntries?: number
  now?: () => number
}

/**
 * One process's brief memory of verify verdicts, keyed by token hash. Failures (network down) are
 * never cached: they reach every caller waiting on that load, and the next caller tries again.
 * Concurrent lookups of one uncached key share a single load (single flight).
 */
export function verifyCache<T>(o: VerifyCacheOptions) {
  const now = o.now ?? Date.now
  const max = o.maxEntries ?? 10_000
  const entries = new Map<string, { verdict: Verdict<T>; until: number }>()
  const loading = new Map<string, Promise<Verdict<T>>>()

  const get = (key: string): Verdict<T> | undefined => {
    const e = entries.get(key)
    if (e === undefined) return undefined
    if (e.until > now()) return e.verdict
    entries.delete(key)
    return undefined
  }

  const put = (key: string, verdict: Verdict<T>) => {
    entries.delete(key) // re-inserting moves the key to the young end of the map's order
    while (entries.size >= max) entries.delete(entries.keys().next().value!)
    entries.set(key, { verdict, until: now() + (verdict.ok ? o.validMs : o.rejectedMs) })
  }

  return {
    /** The cached verdict, if fresh. Never waits, never loads. */
    get,
    /** True while a load for this key is in flight. */
    pending: (key: string) => loading.has(key),
    /** The cached verdict, else the result of `load`, shared with every concurrent caller for the key. */
    async resolve(key: string, load: () => Promise<Verdict<T>>): Promise<Verdict<T>> {
      const hit = get(key)
      if (hit !== undefined) return hit
      let p = loading.get(key)
      if (p === undefined) {
        p = load().then((verdict) => {
          put(key, verdict)
          return verdict
        })
        const forget = () => void loading.delete(key)
        p.then(forget, forget)
        loading.set(key, p)
      }
      return p
    },
  }
}
