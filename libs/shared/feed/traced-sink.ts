import { WireError, type ReadQuery } from '../domain/index.js'
import { startSpan } from '../tracing/index.js'
import type { PageSink } from './waiters.js'

/** `sink` inside a wire.read span. */
export function tracedSink(q: ReadQuery, sink: PageSink): PageSink {
  const span = startSpan('wire.read')
  span?.set('wire.read.cursor', q.cursor ?? -1)
  span?.set('wire.read.wait_ms', q.waitMs)
  return {
    page(p) {
      span?.set('wire.read.signals', p.signals.length)
      span?.set('wire.read.next_cursor', p.nextCursor)
      span?.end()
      sink.page(p)
    },
    fail(err) {
      span?.fail(err instanceof WireError ? err.code : 'internal')
      span?.end()
      sink.fail(err)
    },
  }
}
