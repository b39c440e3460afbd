import { hash } from 'node:crypto'
import { LRUCache } from 'lru-cache'
import { bearerToken } from '../../libs/shared/auth/index.js'
import { WireError } from '../../libs/shared/domain/index.js'
import type { Logger } from '../../libs/shared/log/index.js'
import { readUpTo } from './outbound/read-up-to.js'

/** Derived tokens the aggregator asks for live this long; one is reused until a minute before it ends. */
const DERIVED_TTL_SECONDS = 300
const REUSE_MS = (DERIVED_TTL_SECONDS - 60) * 1000
/** A token the network would not derive from (already derived, unknown) goes on as it is; that verdict is kept briefly. */
const PASS_MS = 5000
const TIMEOUT_MS = 3000
/** The derive answer is a few hundred bytes: more is not read. */
const MAX_ANSWER_BYTES = 4096
const MAX_ENTRIES = 10_000

type Swap = { token: string | null; until: number }

/**
 * In front of the proxy, with an identity network (IDENTITY_URL): a bearer token on a proxied
 * request is swapped for a token derived from it for that one board (POST /identity/tokens/derive),
 * so a board never sees a caller's master token. Derived tokens are cached per (token hash, board)
 * and shared by concurrent requests. A token the network won't derive from (401/403: unknown, or
 * already a derived token) goes on unchanged, for the board to judge. The network down: a read goes
 * on without its token (presence counts the address), anything else fails closed (503).
 */
export function tokenSwap(o: { identityUrl: string; log: Logger; now?: () => number }) {
  const base = o.identityUrl.replace(/\/+$/, '')
  const now = o.now ?? Date.now
  const cache = new LRUCache<string, { swap: Promise<Swap> }>({ max: MAX_ENTRIES })

  async function derive(token: string, authority: string): Promise<Swap> {
    const res = await fetch(`${base}/identity/tokens/derive`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ authority, ttl: DERIVED_TTL_SECONDS }),
      redirect: 'error', // a token goes to IDENTITY_URL and nowhere else
      signal: AbortSignal.timeout(TIMEOUT_MS),
    })
    if (res.status === 401 || res.status === 403) {
      await res.body?.cancel()
      return { token: null, until: now() + PASS_MS }
    }
    const text = res.ok && res.body ? (await readUpTo(res.body, MAX_ANSWER_BYTES))?.toString('utf8') : (await res.body?.cancel(), null)
    const derived = text ? (JSON.parse(text) as { token?: unknown }).token : undefined
    if (typeof derived !== 'string' || derived.length === 0 || derived.length > 2048) throw new Error(`derive answered ${res.status}`)
    return { token: derived, until: now() + REUSE_MS }
  }

  return {
    /** The Authorization header to send to `authority` in place of `authorization` (undefined: send none). */
    async authorizationFor(authorization: string | string[] | undefined, authority: string, method: string): Promise<string | undefined> {
      let token: string | null
      try {
        token = bearerToken(authorization)
      } catch {
        return typeof authorization === 'string' ? authorization : undefined // malformed: the board answers it
      }
      if (token === null) return undefined
      const key = `${hash('sha256', token, 'base64url')} ${authority}`
      let entry = cache.get(key)
      if (!entry) {
        entry = { swap: derive(token, authority) }
        cache.set(key, entry)
        const mine = entry
        mine.swap.then(
          (s) => cache.get(key) === mine && cache.set(key, mine, { ttl: Math.max(1, s.until - now()) }),
          () => cache.get(key) === mine && cache.delete(key), // a failure is not kept
        )
      }
      try {
        const s = await entry.swap
        return `Bearer ${s.token ?? token}`
      } catch (err) {
        o.log.debug({ err: (err as Error).message }, 'identity network unavailable for a token swap')
        if (method === 'GET' || method === 'HEAD') return undefined
        throw new WireError('unavailable', 'the identity network is unavailable; try again shortly', undefined, { retryAfter: 5 })
      }
    },
  }
}
