import { LRUCache } from 'lru-cache'
import type { RegisteredBoard, RegistryStore } from './registry/store.js'

/**
 * The proxy's registry lookups: each authority looked up at most every `ttlMs` per process, and
 * its last answer kept while the next runs (and for another TTL when that fails).
 */
export function boardLookup(store: RegistryStore, ttlMs: number) {
  // @NOTE the lookup's promise is what is cached: when the entry expires, the thousands of followers
  // re-polling at once share one registry query, instead of each queueing its own for the pool
  // (past the pool's connect timeout they failed with 503, every TTL)
  const boards = new LRUCache<string, { board: Promise<RegisteredBoard | null> }>({ max: 10_000, ttl: ttlMs })
  // @NOTE each board's last looked-up entry answers while the next lookup runs, and for another TTL
  // when it fails: the proxy needs the database only to look boards up, so a database that does
  // not answer holds up no request to a board already known (the network drills found every
  // proxied request waiting on the lookup, then 503, while the aggregator's database was cut)
  const known = new LRUCache<string, { board: RegisteredBoard | null }>({ max: 10_000 })
  let forgotten = 0 // how many times a board was forgotten (its status changed here)
  return {
    /** The board registered as `authority` (lower case), or null. */
    get(authority: string): Promise<RegisteredBoard | null> {
      const hit = boards.get(authority)
      if (hit) return hit.board
      const last = known.get(authority)
      const lookup = store.get(authority)
      const entry = { board: last ? Promise.resolve(last.board) : lookup }
      boards.set(authority, entry)
      const since = forgotten
      lookup.then(
        (board) => {
          if (forgotten !== since) return // a board changed meanwhile: what this lookup read may be older than the change
          known.set(authority, { board })
          boards.set(authority, { board: Promise.resolve(board) })
        },
        () => void (!last && boards.get(authority) === entry && boards.delete(authority)), // a failed lookup is not kept
      )
      return entry.board
    },
    /** Its registry row changed here: the next request looks it up again. */
    forget(authority: string) {
      forgotten++
      boards.delete(authority)
      known.delete(authority)
    },
  }
}
