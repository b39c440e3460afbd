import { createHash } from 'node:crypto'
import { LRUCache } from 'lru-cache'

/** A bearer token's cache key: its SHA-256. The token itself is never kept, logged or used as a key. */
export const tokenKey = (token: string) => createHash('sha256').update(token).digest('base64url')

/** What the identity network said about a token: accepted (with what it maps to) or rejected. */
export type Verdict<T> = { ok: true; value: T } | { ok: false }

export interface VerifyCacheOptions {
  /** How long an accepted verdict is reused. */
  validMs: number
  /** How long a rejected verdict is reused (short: a token may be registered a moment later). */
  rejectedMs: number
  /** Least recently used entries are dropped beyond this; tokens are caller-chosen, so the cache must be bounded. */
  maxEntries?: number
  now?: () => number
}

type Load<T> = () => Promise<Verdict<T>>

/**
 * One process's brief memory of verify verdicts, keyed by token hash: an LRU cache whose
 * `fetchMethod` gives single flight (concurrent lookups of one uncached key share one load) and a
 * TTL per verdict. Failures (network down) are never cached: they reach every caller waiting on
 * that load, and the next caller tries again.
 */
export function verifyCache<T>(o: VerifyCacheOptions) {
  const cache = new LRUCache<string, Verdict<T>, Load<T>>({
    max: o.maxEntries ?? 10_000,
    ttl: o.validMs,
    ...(o.now && { perf: { now: o.now }, ttlResolution: 0 }), // a clock of the caller's: read it every time
    fetchMethod: async (_key, _stale, { options, context }) => {
      const verdict = await context()
      options.ttl = verdict.ok ? o.validMs : o.rejectedMs
      return verdict
    },
  })
  return {
    /** The cached verdict, if fresh. Never waits, never loads. */
    get: (key: string): Verdict<T> | undefined => cache.get(key),
    /** True while a load for this key is in flight. */
    pending(key: string): boolean {
      const status: LRUCache.Status<string, Verdict<T>, Load<T>> = {}
      cache.get(key, { status })
      return status.get === 'fetching' || status.get === 'stale-fetching'
    },
    /** The cached verdict, else the result of `load`, shared with every concurrent caller for the key. */
    async resolve(key: string, load: Load<T>): Promise<Verdict<T>> {
      const verdict = await cache.fetch(key, { context: load })
      if (verdict === undefined) throw new Error('verify cache: load aborted') // only on eviction mid-load
      return verdict
    },
  }
}
