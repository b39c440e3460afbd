// The page's one door to the board: the project's client library (served from /view/client/), so the
// viewer follows the feed by the same rules as every other client (dedupe, expiry, Retry-After, backoff).
import { WireClient, WireError } from './client/client/src/index.js'

export { WireError }

/**
 * The board's base URL: where this module was served from, less `/view/wire.js`. Not the page's
 * origin: behind an aggregator's proxy the board lives under a path (`{aggregator}/sw/{authority}`).
 */
export const BASE = new URL('..', import.meta.url).href.replace(/\/$/, '')

/** GET for the two viewer-only reads the client has no call for (stats, tags); errors as the client's. */
async function getJson(path, query) {
  const q = new URLSearchParams()
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') q.set(k, String(v))
  const res = await fetch(`${BASE}${path}${q.size ? `?${q}` : ''}`, { headers: { accept: 'application/json' } })
  const body = await res.json().catch(() => null)
  if (!res.ok) throw new WireError(body?.error?.code ?? 'internal', res.status, body?.error?.message ?? `HTTP ${res.status}`)
  return body
}

/** The board this page came from, as the page uses it. */
export function openBoard() {
  const client = new WireClient({ url: BASE })
  return {
    read: (query) => client.read(query),
    get: (id) => client.get(id),
    thread: async (id) => (await client.thread(id)).signals,
    board: () => client.board(),
    /** Each new matching signal once, from `cursor` on (a Follower: an async iterator). */
    follow: (query, o) => client.follow(query, o),
    stats: (query) => getJson('/sw/stats', query),
    tags: async (prefix, limit = 20) => (await getJson('/sw/tags', { q: prefix, limit })).tags,

    /** The admin API with this token: a client of its own, held only as long as the page holds it. */
    admin(token) {
      const a = new WireClient({ url: BASE, adminToken: token }).admin
      return {
        board: () => a.metadata(),
        patchBoard: (patch) => a.patchMetadata(patch),
        rules: () => a.rules(),
        addRule: (ruleType, identityId) => a.addRule(ruleType, identityId),
        removeRule: (id) => a.removeRule(id),
        pin: (id) => a.pin(id),
        unpin: (id) => a.unpin(id),
        remove: (id) => a.remove(id),
      }
    },
  }
}
