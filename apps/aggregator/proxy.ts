import { LRUCache } from 'lru-cache'
import { request, type Dispatcher } from 'undici'
import { WireError } from '../../libs/shared/domain/index.js'
import type { ClientLimits } from '../../libs/shared/limits/index.js'
import type { AddressPolicy } from './outbound/address-policy.js'
import { checkHost } from './outbound/agent.js'
import { sharedPolls } from './shared-polls.js'
import type { RegisteredBoard, RegistryStore } from './registry/store.js'

/** Request headers a board needs; the rest (cookies, hop-by-hop, Host) stay here. */
const FORWARD = ['authorization', 'content-type', 'accept', 'idempotency-key', 'user-agent', 'x-request-id']
/** Response headers that describe this hop, not the board's answer (CORS is the aggregator's own). */
const DROP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'proxy-connection', 'trailer', 'date'])

export interface ProxyRequest {
  method: string
  authority: string
  /** The board's path: what follows `/sw/{authority}` (e.g. `/sw/signals?cursor=3`, `/.well-known/wire`). */
  rest: string
  headers: Record<string, string | string[] | undefined>
  body: string | undefined
  clientAddress: string
  left: AbortSignal
}

export interface ProxyAnswer {
  status: number
  headers: Record<string, string | string[]>
  /** Streamed as it arrives, or (a shared long-poll's answer) bytes read whole once. */
  body: Dispatcher.ResponseData['body'] | Buffer
}

/** Most bytes a shared long-poll's answer may have: a page of 100 signals of 16 KiB with room to spare. */
const MAX_SHARED_ANSWER = 8 * 1024 * 1024

async function readAll(body: Dispatcher.ResponseData['body']): Promise<Buffer> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const c of body as AsyncIterable<Buffer>) {
    size += c.length
    if (size > MAX_SHARED_ANSWER) throw new WireError('unavailable', 'the board\'s answer is too large', undefined, { retryAfter: 1, overload: true })
    chunks.push(c)
  }
  return Buffer.concat(chunks)
}

/**
 * The proxy's one door: `{aggregator}/sw/{authority}/…` → the registered board's `/…` (`{aggregator}/sw/{authority}`
 * is the board's base URL, so every path of a direct server works through it), the same
 * method, body, status, headers and bytes. The caller's Authorization goes through and is neither
 * stored nor logged. Registered boards only; the outbound agent checks every address it connects to.
 */
/**
 * Retry-After when one request to a board failed: a hiccup, most likely, and a shared long-poll's
 * failure answers every client waiting on it at once, so they come back soon, not after a recheck
 * interval. A board that keeps failing is marked down by its checks, and that answer says longer.
 */
const TRANSIENT_RETRY_SECONDS = 2

export function boardProxy(
  store: RegistryStore,
  dispatcher: Dispatcher,
  policy: AddressPolicy,
  o: { maxInFlight: number; retryAfterSeconds: number; limits: Pick<ClientLimits, 'publish'>; sharePolls: boolean },
) {
  // @NOTE the lookup's promise is what is cached: when the entry expires, the thousands of followers
  // re-polling at once share one registry query, instead of each queueing its own for the pool
  // (past the pool's connect timeout they failed with 503, every TTL)
  const boards = new LRUCache<string, { board: Promise<RegisteredBoard | null> }>({ max: 10_000, ttl: 5_000 })
  let inFlight = 0
  const polls = sharedPolls()
  const boardOf = (authority: string): Promise<RegisteredBoard | null> => {
    const hit = boards.get(authority)
    if (hit) return hit.board
    const entry = { board: store.get(authority) }
    boards.set(authority, entry)
    entry.board.catch(() => boards.get(authority) === entry && boards.delete(authority)) // a failed lookup is not kept
    return entry.board
  }
  return {
    get inFlight() {
      return inFlight
    },
    forget: (authority: string) => boards.delete(authority),
    async forward(r: ProxyRequest): Promise<ProxyAnswer> {
      // reads spent their budget in the app's hook; every other method spends the address's publish budget here, before any work
      if (r.method !== 'GET' && r.method !== 'HEAD') await o.limits.publish(r.clientAddress)
      const board = await boardOf(r.authority.toLowerCase())
      if (!board || board.status === 'dropped') throw new WireError('not_found', `no board ${r.authority.slice(0, 200)} is registered here`)
      if (board.status === 'down') throw new WireError('unavailable', `${board.authority} is down`, undefined, { retryAfter: o.retryAfterSeconds, overload: true })
      if (o.maxInFlight > 0 && inFlight >= o.maxInFlight)
        throw new WireError('unavailable', 'this aggregator holds its limit of proxied requests', undefined, { retryAfter: 1, overload: true })
      const url = new URL(board.url + (r.rest.startsWith('/') ? r.rest : `/${r.rest}`))
      checkHost(policy, url)
      const headers: Record<string, string> = {}
      for (const h of FORWARD) {
        const v = r.headers[h]
        if (typeof v === 'string') headers[h] = v
      }
      const xff = r.headers['x-forwarded-for']
      headers['x-forwarded-for'] = typeof xff === 'string' ? `${xff}, ${r.clientAddress}` : r.clientAddress
      const keep = (h: Dispatcher.ResponseData['headers']) => {
        const out: Record<string, string | string[]> = {}
        for (const [k, v] of Object.entries(h)) if (v !== undefined && !DROP.has(k) && !k.startsWith('access-control-')) out[k] = v
        return out
      }
      const fail = (err: unknown, left: AbortSignal) =>
        left.aborted
          ? new WireError('invalid_request', 'the client left') // nobody reads this answer: a client-side refusal, logged at debug
          : // the board's trouble, not ours: a warning (overload), with Retry-After
            new WireError('unavailable', `${board.authority} did not answer`, { board: board.authority }, { retryAfter: TRANSIENT_RETRY_SECONDS, overload: true, cause: err })
      if (o.sharePolls && r.method === 'GET' && headers.authorization === undefined && /[?&]wait=/.test(r.rest)) {
        // an anonymous long-poll: one upstream request per board path and query, shared by every client asking the same
        inFlight++
        try {
          const answer = await polls.join(`${board.authority} ${r.rest}`, async (signal) => {
            const res = await request(url, { dispatcher, method: 'GET', headers: { accept: headers.accept ?? 'application/json' }, signal }).catch((err: unknown) => Promise.reject(fail(err, signal)))
            return { status: res.statusCode, headers: keep(res.headers), body: await readAll(res.body) }
          }, r.left)
          return answer
        } finally {
          inFlight--
        }
      }
      inFlight++
      let res: Dispatcher.ResponseData
      try {
        res = await request(url, { dispatcher, method: r.method as Dispatcher.HttpMethod, headers, body: r.body ?? null, signal: r.left })
      } catch (err) {
        inFlight--
        throw fail(err, r.left)
      }
      let done = false
      const release = () => void (done || ((done = true), inFlight--))
      res.body.once('close', release).once('end', release).once('error', release)
      return { status: res.statusCode, headers: keep(res.headers), body: res.body }
    },
  }
}
export type BoardProxy = ReturnType<typeof boardProxy>
