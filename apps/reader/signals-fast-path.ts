import type { ReadQuery } from '../../libs/shared/domain/index.js'
import { pageBody, pageText, type Caller, type FeedPage, type Gone, type PageSink } from '../../libs/shared/feed/index.js'
import { metrics } from '../../libs/shared/metrics/index.js'
import {
  encodeResponse,
  errorBody,
  logFailure,
  Overloaded,
  responseText,
  retryAfterSeconds,
  sharedResponse,
  STATUS,
  toWireError,
  type FastConnection,
  type FastPath,
  type FastPathRoutes,
  type FastRequest,
} from '../../libs/shared/http/index.js'
import type { ReaderContext } from './context.js'

/**
 * GET /sw/signals (and /sw/v1/signals) in the fast path: the polls and long-polls every follower
 * sends, through the same door as the fastify route (routes/signals.ts), answered with the headers
 * fastify sends (captured from its answer to `probe`; test/reader/fast-path.test.ts compares the
 * bytes). A query the door refuses, an overloaded process and shutdown are left to fastify.
 */
export function signalsFastPath(ctx: ReaderContext): FastPathRoutes {
  const door = ctx.readSide
  return {
    paths: ['/sw/signals', '/sw/v1/signals'],
    probe: '/sw/signals?limit=none', // refused by the door's parser before any budget or read
    serve(req, conn, fast) {
      let q: ReadQuery
      try {
        q = door.query(req.query)
      } catch {
        return false // fastify answers the 400
      }
      // overloaded: followers reading from the tail are served; anything that would cost a page from
      // the database is refused here, before any budget, presence or query
      if (fast.overloaded && !ctx.readSide.feed.fromTail(q)) return shed(fast, req, conn)
      const answer = ((conn.kept as FastAnswer | undefined) ??= new FastAnswer(ctx, fast, conn))
      answer.take(req, fast.address(req, conn))
      try {
        door.readTo(answer, q, answer)
      } catch (err) {
        answer.fail(err)
      }
      return true
    },
  }
}

/**
 * The answer of the request in flight on `conn`, and its caller: the sink its read goes to. One per
 * connection, taken over by each request in turn (`conn.kept`): the connection takes its next
 * request only once this one is answered, and a read calls its sink once. While the read waits (a
 * long-poll) the waiter is the only object of its own: what a scavenge finds waiting is promoted.
 */
class FastAnswer implements PageSink, Caller {
  private readonly ctx: ReaderContext
  private readonly fast: FastPath
  private readonly conn: FastConnection
  /** The caller leaves when the connection closes. */
  readonly gone: Gone
  private close = false
  private path = ''
  address = ''
  authorization: string | undefined = undefined

  constructor(ctx: ReaderContext, fast: FastPath, conn: FastConnection) {
    this.ctx = ctx
    this.fast = fast
    this.conn = conn
    this.gone = conn
  }

  /** `req` (from `address`) is the connection's request in flight now. */
  take(req: FastRequest, address: string) {
    this.close = req.close
    this.path = req.path
    // the same text as the last request's: the string held already is kept (the new one dies young)
    if (address !== this.address) this.address = address
    if (req.authorization !== this.authorization) this.authorization = req.authorization
  }

  page(page: FeedPage) {
    try {
      const closes = this.close || this.fast.closing // a wait answered at shutdown closes its connection
      this.conn.respond(pageResponse(page, this.fast, closes), closes)
    } catch (err) {
      this.fail(err)
    }
  }

  fail(err: unknown) {
    const { fast } = this
    const closes = this.close || fast.closing
    const e = toWireError(err)
    logFailure(this.ctx.log, err, e, { url: this.path })
    const retryAfter = retryAfterSeconds(e)
    const lines = retryAfter === undefined ? fast.headers.lines : fast.headers.withRetryAfter(retryAfter)
    this.conn.respond(
      encodeResponse(STATUS[e.code], lines, Buffer.from(JSON.stringify(errorBody(e))), closes ? null : fast.keepAliveSeconds),
      closes,
    )
  }
}

const OVERLOADED = new Overloaded()
const OVERLOADED_RETRY_AFTER = retryAfterSeconds(OVERLOADED)!

function shed(fast: FastPath, req: FastRequest, conn: FastConnection): true {
  metrics.refused.inc({ reason: 'overloaded' })
  const closes = req.close || fast.closing
  const body = Buffer.from(JSON.stringify(errorBody(OVERLOADED)))
  conn.respond(
    encodeResponse(STATUS.unavailable, fast.headers.withRetryAfter(OVERLOADED_RETRY_AFTER), body, closes ? null : fast.keepAliveSeconds),
    closes,
  )
  return true
}

/**
 * A page's response. The first answer with a page is written as text (responseText: its bytes live
 * only while written); a page answered again is one many share (a wake-up's, or SharedPages'), so
 * from then on its body and response are encoded once (pageBody, sharedResponse).
 */
function pageResponse(page: FeedPage, fast: FastPath, closes: boolean): Buffer | string {
  const shared = page.text !== undefined // another answer had this page already
  const keepAlive = closes ? null : fast.keepAliveSeconds
  if (shared && keepAlive !== null) return sharedResponse(200, fast.headers.lines, pageBody(page), keepAlive)
  if (!fast.headers.ascii) return encodeResponse(200, fast.headers.lines, pageBody(page), keepAlive)
  const { text, bytes } = pageText(page)
  return responseText(200, fast.headers.lines, text, bytes, keepAlive)
}
