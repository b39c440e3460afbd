import type { FetchLike } from '../../../client/src/index.js'
import { followPagesShed } from '../metrics.js'

export interface PageBudgetOptions {
  /** Decoded bytes of followed pages held at once, every board together (at least one page). */
  maxBytes: number
  /** A page's body must have arrived this long after its headers (ms). */
  bodyTimeoutMs: number
}

/** The error a page past the budget or its body deadline ends with: the client reports it as `unavailable`, and the follower retries after a backoff. */
class PageDropped extends Error {}

/**
 * The follower's process-wide bound: every board's page (at most one at a time each) counts its
 * decoded bytes here as they stream, from its first byte until the follower releases it (indexed,
 * or failed). A page whose next bytes would pass the budget is dropped before they are read and
 * asked for again after the client's backoff, so many boards answering large pages together hold at
 * most `maxBytes`, not `boards × AGGREGATOR_PAGE_MAX_BYTES`. Bytes are counted as they arrive, not
 * reserved ahead, so a board that trickles or stalls holds only what it has sent (and for at most
 * `bodyTimeoutMs`), and small pages fit beside it. A board's stream is cancelled, not buffered,
 * when its page is dropped.
 */
export function pageBudget(o: PageBudgetOptions) {
  let held = 0
  return {
    /** Decoded bytes of followed pages held now. */
    get held() {
      return held
    },
    /** One board's fetch, counted here, and `release()`: its current page is done with. */
    forBoard(fetch: FetchLike): { fetch: FetchLike; release(): void } {
      let current: { bytes: number } | null = null
      const release = () => {
        if (!current) return
        held -= current.bytes
        current.bytes = 0
        current = null
      }
      const counted: FetchLike = async (input, init) => {
        release() // the board's previous page, if a failure left it held
        const page = { bytes: 0 }
        current = page
        const drop = () => {
          held -= page.bytes
          page.bytes = 0
          if (current === page) current = null
        }
        const late = new AbortController()
        const res = await fetch(input, { ...init, signal: init.signal ? AbortSignal.any([init.signal, late.signal]) : late.signal })
        if (!res.body) return res
        const timer = setTimeout(
          () => (drop(), late.abort(new PageDropped(`the page's body did not arrive within ${o.bodyTimeoutMs} ms`))),
          o.bodyTimeoutMs,
        )
        const reader = res.body.getReader()
        const body = new ReadableStream<Uint8Array>({
          async pull(ctl) {
            let r: Awaited<ReturnType<typeof reader.read>>
            try {
              r = await reader.read()
            } catch (err) {
              clearTimeout(timer)
              drop()
              return ctl.error(err)
            }
            if (r.done) return (clearTimeout(timer), ctl.close())
            const n = r.value.byteLength
            if (held + n > o.maxBytes) {
              clearTimeout(timer)
              drop()
              followPagesShed.inc()
              void reader.cancel().catch(() => {})
              return ctl.error(
                new PageDropped(
                  `followed pages hold ${held} bytes; this one's next ${n} would pass AGGREGATOR_FOLLOW_MAX_BYTES (${o.maxBytes})`,
                ),
              )
            }
            held += n
            page.bytes += n
            ctl.enqueue(r.value)
          },
          cancel(reason) {
            clearTimeout(timer)
            drop()
            return reader.cancel(reason)
          },
        })
        return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers })
      }
      return { fetch: counted, release }
    },
  }
}
