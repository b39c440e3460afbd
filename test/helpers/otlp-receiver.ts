import { createServer } from 'node:http'
import type { Test } from 'tap'

/** One span as the receiver recorded it, with its resource's attributes and its own, flattened to values. */
export interface ReceivedSpan {
  name: string
  traceId: string
  spanId: string
  parentSpanId: string
  kind: number
  status: { code?: number; message?: string }
  resource: Record<string, unknown>
  attributes: Record<string, unknown>
}

export interface OtlpReceiver {
  /** The base URL, as OTEL_EXPORTER_OTLP_ENDPOINT takes it (spans are POSTed to /v1/traces). */
  url: string
  spans: ReceivedSpan[]
  /** Export requests refused (not JSON, wrong path): a correct exporter makes none. */
  refused: number
}

const MAX_BODY = 4 * 1024 * 1024

// OTLP JSON's AnyValue → a plain value (ints come as strings, per the protobuf JSON mapping)
const anyValue = (v: any): unknown =>
  v == null
    ? undefined
    : 'stringValue' in v
      ? v.stringValue
      : 'intValue' in v
        ? Number(v.intValue)
        : 'doubleValue' in v
          ? v.doubleValue
          : 'boolValue' in v
            ? v.boolValue
            : v
const attrs = (list: any[] | undefined) => Object.fromEntries((list ?? []).map((a) => [a.key, anyValue(a.value)]))

/**
 * The trace collector, faked as a small real HTTP server (the one external service besides the
 * identity network that tests may fake): OTLP/HTTP with JSON bodies on POST /v1/traces
 * (https://opentelemetry.io/docs/specs/otlp/#otlphttp), answering 200 with an empty
 * ExportTraceServiceResponse and recording every span.
 */
export async function startOtlpReceiver(t: Test): Promise<OtlpReceiver> {
  const r: OtlpReceiver = { url: '', spans: [], refused: 0 }
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    let size = 0
    req.on('data', (c: Buffer) => {
      size += c.length
      if (size > MAX_BODY) req.destroy()
      else chunks.push(c)
    })
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces' || !String(req.headers['content-type']).startsWith('application/json')) {
        r.refused++
        res.writeHead(415, { 'content-type': 'application/json' }).end('{}')
        return
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'))
      for (const rs of body.resourceSpans ?? [])
        for (const ss of rs.scopeSpans ?? [])
          for (const s of ss.spans ?? [])
            r.spans.push({
              name: s.name,
              traceId: s.traceId,
              spanId: s.spanId,
              parentSpanId: s.parentSpanId ?? '',
              kind: s.kind,
              status: s.status ?? {},
              resource: attrs(rs.resource?.attributes),
              attributes: attrs(s.attributes),
            })
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => (server.close(() => resolve()), server.closeAllConnections())))
  r.url = `http://127.0.0.1:${(server.address() as { port: number }).port}`
  return r
}
