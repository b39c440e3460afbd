import { context, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, TraceFlags, type Context } from '@opentelemetry/api'
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http'
import { resourceFromAttributes } from '@opentelemetry/resources'
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
  type Sampler,
} from '@opentelemetry/sdk-trace'
import type { TracingSettings } from '../config/index.js'
import type { WireSpan } from './span.js'

// Loaded only when tracing is on (index.ts imports it dynamically): the official SDK, a batching
// span processor and the OTLP/HTTP JSON exporter. No global registration and no context manager:
// Wire's spans are started where they happen, a publish's under its client's `traceparent`.

function sampler(s: TracingSettings): Sampler {
  const root = s.sampler.endsWith('always_off')
    ? new AlwaysOffSampler()
    : s.sampler.endsWith('traceidratio')
      ? new TraceIdRatioBasedSampler(s.ratio)
      : new AlwaysOnSampler()
  return s.sampler.startsWith('parentbased_') ? new ParentBasedSampler({ root }) : root
}

// W3C Trace Context, version 00 (https://www.w3.org/TR/trace-context/#traceparent-header): a fixed-length, linear match
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/

function parentOf(traceparent: string | undefined): Context {
  const m = traceparent && traceparent.length === 55 ? TRACEPARENT.exec(traceparent) : null
  if (!m || /^0+$/.test(m[1]!) || /^0+$/.test(m[2]!)) return ROOT_CONTEXT
  return trace.setSpanContext(ROOT_CONTEXT, {
    traceId: m[1]!,
    spanId: m[2]!,
    traceFlags: parseInt(m[3]!, 16) & TraceFlags.SAMPLED,
    isRemote: true,
  })
}

export async function otelTracer(s: TracingSettings, role: string) {
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': s.serviceName ?? `wire-${role}`, 'wire.role': role }),
    sampler: sampler(s),
    spanProcessors: [
      new BatchSpanProcessor({
        exporter: new OTLPTraceExporter({ url: s.url }),
        scheduledDelayMillis: s.scheduleDelayMs,
        maxQueueSize: 2048,
      }),
    ],
  })
  const tracer = provider.getTracer('wire')
  const start = (name: string, traceparent?: string): WireSpan => {
    const parent = traceparent === undefined ? context.active() : parentOf(traceparent)
    const span = tracer.startSpan(name, { kind: traceparent === undefined ? SpanKind.INTERNAL : SpanKind.SERVER }, parent)
    return {
      set: (key, value) => void span.setAttribute(key, value),
      fail: (code) => {
        span.setAttribute('wire.error', code)
        span.setStatus({ code: SpanStatusCode.ERROR, message: code })
      },
      end: () => span.end(),
    }
  }
  return { start, shutdown: () => provider.shutdown() }
}
