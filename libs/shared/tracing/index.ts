import type { TracingSettings } from '../config/index.js'
import type { Logger } from '../log/index.js'
import type { WireSpan } from './span.js'

/**
 * OpenTelemetry traces of publishes, page reads and wake-ups: off unless OTEL_* settings name an
 * endpoint (docs/operations.md, "Tracing"). Off, a traced place pays one boolean test and nothing
 * else: the SDK and exporter are imported only by `startTracing` when tracing is on.
 *
 *   const span = tracing.on ? startSpan('wire.publish') : undefined
 *   …
 *   span?.end()
 */
export const tracing = { on: false }

export type { WireSpan }

type Starter = (name: string, traceparent?: string) => WireSpan
let starter: Starter | null = null

/** A new span (a child of the caller's W3C `traceparent` when it carries a valid one). Call only when `tracing.on`. */
export function startSpan(name: string, traceparent?: string): WireSpan | undefined {
  return starter?.(name, traceparent)
}

/**
 * Loads the OpenTelemetry SDK and its OTLP/HTTP exporter when `s.enabled` and turns tracing on for
 * this process; resolves to what flushes the spans still buffered and turns it off (at close).
 */
export async function startTracing(s: TracingSettings, role: string, log: Logger): Promise<() => Promise<void>> {
  if (!s.enabled || starter) return async () => {}
  const { otelTracer } = await import('./otel.js')
  const t = await otelTracer(s, role)
  starter = t.start
  tracing.on = true
  log.info({ url: s.url, serviceName: s.serviceName ?? `wire-${role}`, sampler: s.sampler }, 'tracing on: spans are exported by OTLP/HTTP')
  return async () => {
    if (starter !== t.start) return
    tracing.on = false
    starter = null
    await t.shutdown().catch((err: unknown) => log.warn({ err }, 'tracing: could not flush the last spans'))
  }
}
