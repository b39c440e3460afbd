import { pipeline } from 'node:stream'
import { request, type Dispatcher } from 'undici'
import type { Clock } from '../../libs/shared/clock.js'
import { WireError } from '../../libs/shared/domain/index.js'
import type { ClientLimits } from '../../libs/shared/limits/index.js'
import type { AddressPolicy } from './outbound/address-policy.js'
import { checkHost } from './outbound/agent.js'
import { boardBudget } from './proxy-budget.js'
import { boardLookup } from './proxy-lookup.js'
import { answerHeaders, boardPath, capped, forwardHeaders, readAll, waitSeconds } from './proxy-policy.js'
import { refusals, slots } from './proxy-slots.js'
import { sharedPolls } from './shared-polls.js'
import type { RegistryStore } from './registry/store.js'

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
  /** Streamed as it arrives (counted, cut at the answer cap), or (a shared long-poll's answer) bytes read whole once. */
  body: NodeJS.ReadableStream | Buffer
}

export interface ProxyOptions {
  maxInFlight: number
  retryAfterSeconds: number
  limits: Pick<ClientLimits, 'publish' | 'key'>
  sharePolls: boolean
  /** Most bytes of one answer (streamed or shared). */
  answerMaxBytes: number
  /** Requests without wait one client address may have in flight (0: off). */
  perAddressMax: number
  /** Requests in flight to one board; a shared poll counts once (0: off). */
  perBoardMax: number
  /** A whole exchange's deadline, ms; a long-poll gets its wait on top. */
  timeoutMs: number
  /** Bytes a second each board's answers may stream, a bucket per board (0: off; proxy-budget.ts). */
  boardBytesPerSecond: number
  /** Boards the registry holds at most: the budget keeps a bucket for each, no more. */
  maxBoards: number
  /** How long a registry lookup is used before it is made again, ms (default 5000). */
  lookupTtlMs?: number
  /** The budget's clock (a test's drives it). */
  clock?: Clock
}

/**
 * Retry-After when one request to a board failed: a hiccup, most likely, and a shared long-poll's
 * failure answers every client waiting on it at once, so they come back soon, not after a recheck
 * interval. A board that keeps failing is marked down by its checks, and that answer says longer.
 */
const TRANSIENT_RETRY_SECONDS = 2

/**
 * The proxy's one door: `{aggregator}/sw/{authority}/…` → the registered board's `/…` (`{aggregator}/sw/{authority}`
 * is the board's base URL, so every path of a direct server works through it), the same
 * method, body, status, headers and bytes. The caller's Authorization goes through and is neither
 * stored nor logged. Registered boards only; the outbound agent checks every address it connects to.
 */
export function boardProxy(store: RegistryStore, dispatcher: Dispatcher, policy: AddressPolicy, o: ProxyOptions) {
  const lookup = boardLookup(store, o.lookupTtlMs ?? 5_000)
  let inFlight = 0
  const polls = sharedPolls()
  const perBoard = slots()
  const perAddress = slots()
  const budget = boardBudget({ bytesPerSecond: o.boardBytesPerSecond, maxBoards: o.maxBoards, clock: o.clock })
  return {
    get inFlight() {
      return inFlight
    },
    /** Requests in flight to a board (a shared poll once). */
    boardInFlight: (authority: string) => perBoard.count(authority),
    /** Board bytes a second: each board's bucket, and what it counted (/metrics). */
    budget,
    /** The board's registry row changed here; `gone` (removed, blocked): its byte budget goes too (a refresh keeps it). */
    forget: (authority: string, gone = false) => {
      lookup.forget(authority)
      if (gone) budget.drop(authority)
    },
    async forward(r: ProxyRequest): Promise<ProxyAnswer> {
      // reads spent their budget in the app's hook; every other method spends the address's publish budget here, before any work
      if (r.method !== 'GET' && r.method !== 'HEAD') await o.limits.publish(r.clientAddress)
      const rest = boardPath(r.rest)
      const board = await lookup.get(r.authority.toLowerCase())
      if (!board || board.status === 'dropped') throw new WireError('not_found', `no board ${r.authority.slice(0, 200)} is registered here`)
      if (board.status === 'down')
        throw new WireError('unavailable', `${board.authority} is down`, undefined, { retryAfter: o.retryAfterSeconds, overload: true })
      budget.admit(board.authority) // 503 for a board over its bytes a second, before any work
      if (o.maxInFlight > 0 && inFlight >= o.maxInFlight) throw refusals.processFull()
      const url = new URL(board.url + rest)
      checkHost(policy, url)
      const headers = forwardHeaders(r.headers, r.clientAddress)
      const fail = (err: unknown, left: AbortSignal) =>
        left.aborted && !(left.reason instanceof DOMException && left.reason.name === 'TimeoutError')
          ? new WireError('invalid_request', 'the client left') // nobody reads this answer: a client-side refusal, logged at debug
          : // the board's trouble, not ours: a warning (overload), with Retry-After
            new WireError(
              'unavailable',
              `${board.authority} did not answer`,
              { board: board.authority },
              { retryAfter: TRANSIENT_RETRY_SECONDS, overload: true, cause: err },
            )
      const waits = r.method === 'GET' ? waitSeconds(rest.slice(rest.indexOf('?') + 1 || rest.length)) : 0
      const deadlineMs = o.timeoutMs + waits * 1000
      if (o.sharePolls && waits > 0 && headers.authorization === undefined) {
        // an anonymous long-poll: one upstream request per board path and query, shared by every client asking the same.
        // The board counts it against the address of the client that opened it (X-Forwarded-For), not the aggregator's.
        inFlight++
        try {
          return await polls.join(
            `${board.authority} ${rest}`,
            async (shared) => {
              const free = perBoard.hold(board.authority, o.perBoardMax, () => refusals.boardBusy(board.authority))
              const signal = AbortSignal.any([shared, AbortSignal.timeout(deadlineMs)])
              try {
                const res = await request(url, {
                  dispatcher,
                  method: 'GET',
                  headers: {
                    accept: headers.accept ?? 'application/json',
                    'accept-encoding': 'identity',
                    'x-forwarded-for': headers['x-forwarded-for']!,
                  },
                  signal,
                })
                const body = await readAll(budget.meter(res.body, board.authority, signal), o.answerMaxBytes)
                return { status: res.statusCode, headers: answerHeaders(res.headers, rest), body }
              } catch (err) {
                throw err instanceof WireError ? err : fail(err, signal)
              } finally {
                free()
              }
            },
            r.left,
          )
        } finally {
          inFlight--
        }
      }
      // a waiting request holds its address's long-poll slot (the app's hook); any other holds one of its proxy slots
      const freeAddress =
        waits > 0 ? () => {} : perAddress.hold(o.limits.key(r.clientAddress), o.perAddressMax, () => refusals.addressBusy(o.perAddressMax))
      let freeBoard: () => void
      try {
        freeBoard = perBoard.hold(board.authority, o.perBoardMax, () => refusals.boardBusy(board.authority))
      } catch (err) {
        freeAddress()
        throw err
      }
      inFlight++
      let done = false
      const release = () => void (done || ((done = true), inFlight--, freeBoard(), freeAddress()))
      const signal = AbortSignal.any([r.left, AbortSignal.timeout(deadlineMs)])
      let res: Dispatcher.ResponseData
      try {
        res = await request(url, {
          dispatcher,
          method: r.method as Dispatcher.HttpMethod,
          headers: { ...headers, 'accept-encoding': 'identity' },
          body: r.body ?? null,
          signal,
        })
      } catch (err) {
        release()
        throw fail(err, signal)
      }
      // the answer streams through counted: cut at answerMaxBytes, and at the deadline (the signal destroys the body)
      const out = pipeline(budget.meter(res.body, board.authority, signal), capped(o.answerMaxBytes), (err) => {
        release()
        if (err) res.body.destroy()
      })
      return { status: res.statusCode, headers: answerHeaders(res.headers, rest), body: out }
    },
  }
}
export type BoardProxy = ReturnType<typeof boardProxy>
