import querystring from 'fast-querystring'
import { parseReadQuery, type ReadQuery } from '../../libs/shared/domain/index.js'
import { pageBody, type FeedPage } from '../../libs/shared/feed/index.js'
import {
  encodeResponse,
  errorBody,
  EXPOSED_HEADERS,
  headerLines,
  logFailure,
  retryAfterSeconds,
  sharedResponse,
  STATUS,
  toWireError,
  type Lane,
  type LaneConnection,
  type LaneRequest,
  type LaneRoutes,
} from '../../libs/shared/http/index.js'
import type { ReaderContext } from './context.js'
import { pollerOf } from './routes/signals.js'

const JSON_TYPE = 'application/json; charset=utf-8'
/** What fastify's CORS hook sets on every answer, in its order. */
const CORS: Array<[string, string]> = [
  ['access-control-allow-origin', '*'],
  ['access-control-expose-headers', EXPOSED_HEADERS.join(', ')],
]
const PAGE_HEADERS = headerLines([...CORS, ['cache-control', 'no-store']])
/** Parsed queries kept by their text: a feed's followers all send the same one. Emptied when full. */
const QUERY_CACHE_MAX = 1024
/** Longer query texts are parsed every time: the cache holds at most QUERY_CACHE_MAX × this many characters. */
const QUERY_CACHE_TEXT_MAX = 512

/**
 * GET /sw/signals (and /sw/v1/signals) in the HTTP lane: the polls and long-polls every follower
 * sends, answered with the same bytes the fastify route sends (test/reader/lane.test.ts compares
 * them). A query the domain refuses, an overloaded process and shutdown are left to fastify, which
 * answers them; budgets, presence and the feed are the route's own (routes/signals.ts).
 */
export function signalsLane(ctx: ReaderContext): LaneRoutes {
  const parsed = new Map<string, ReadQuery>()
  /** The query of `text`, or null when the domain refuses it. Queries are frozen: waits share them. */
  const queryOf = (text: string): ReadQuery | null => {
    const hit = parsed.get(text)
    if (hit) return hit
    let q: ReadQuery
    try {
      q = Object.freeze(parseReadQuery(text.length ? querystring.parse(text) : {}, Date.now(), ctx.cfg.authority))
    } catch {
      return null
    }
    if (q.sinceMs !== null || text.length > QUERY_CACHE_TEXT_MAX) return q // relative to now, or long: not kept
    if (parsed.size >= QUERY_CACHE_MAX) parsed.clear()
    parsed.set(text, q)
    return q
  }
  return {
    paths: ['/sw/signals', '/sw/v1/signals'],
    serve(req, conn, lane) {
      if (lane.overloaded) return false
      const q = queryOf(req.query)
      if (!q) return false // fastify answers the 400 (and spends the read budget first, as for any GET)
      void answer(ctx, lane, req, conn, q)
      return true
    },
  }
}

async function answer(ctx: ReaderContext, lane: Lane, req: LaneRequest, conn: LaneConnection, q: ReadQuery) {
  const address = lane.address(req, conn)
  let release: (() => void) | undefined
  try {
    if (ctx.limits.readsLimited) await ctx.limits.read(address)
    if (ctx.limits.pollsLimited && q.waitMs > 0) release = await ctx.limits.openPoll(address)
    ctx.presence.touch(pollerOf(ctx, req.authorization, address))
    const page = await ctx.feed.read(q, q.waitMs > 0 ? conn : undefined)
    conn.respond(pageResponse(page, lane, req), closes(lane, req))
  } catch (err) {
    const e = toWireError(err)
    logFailure(ctx.log, err, e, { url: req.path })
    const retryAfter = retryAfterSeconds(e)
    const lines = headerLines(retryAfter === undefined ? CORS : [...CORS, ['retry-after', String(retryAfter)]])
    const body = Buffer.from(JSON.stringify(errorBody(e)))
    conn.respond(encodeResponse(STATUS[e.code], lines, JSON_TYPE, body, closes(lane, req) ? null : lane.keepAliveSeconds), closes(lane, req))
  } finally {
    release?.()
  }
}

const closes = (lane: Lane, req: LaneRequest) => req.close || lane.closing

function pageResponse(page: FeedPage, lane: Lane, req: LaneRequest): Buffer {
  const shared = page.body !== undefined // another answer encoded this page already: a wake-up's page
  const body = pageBody(page)
  if (closes(lane, req)) return encodeResponse(200, PAGE_HEADERS, JSON_TYPE, body, null)
  if (!shared) return encodeResponse(200, PAGE_HEADERS, JSON_TYPE, body, lane.keepAliveSeconds)
  return sharedResponse(200, PAGE_HEADERS, JSON_TYPE, body, lane.keepAliveSeconds)
}
