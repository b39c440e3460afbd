import { ConfigError } from './errors.js'
import type { SAMPLERS, tracing } from './settings/tracing.js'
import type { Values } from './kinds.js'

type OtelEnv = Values<(typeof tracing)['settings']>

export interface TracingSettings {
  /** Off unless an OTLP endpoint is set (and neither OTEL_SDK_DISABLED nor OTEL_TRACES_EXPORTER=none). */
  enabled: boolean
  /** Where spans are POSTed (OTLP/HTTP JSON). */
  url: string
  serviceName: string | undefined
  sampler: (typeof SAMPLERS)[number]
  ratio: number
  scheduleDelayMs: number
}

export function tracingSettings(e: OtelEnv): TracingSettings {
  const base = e.OTEL_EXPORTER_OTLP_ENDPOINT?.replace(/\/+$/, '')
  const url = e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? (base ? `${base}/v1/traces` : '')
  const enabled = url !== '' && e.OTEL_SDK_DISABLED !== 'true' && e.OTEL_TRACES_EXPORTER !== 'none'
  if (e.OTEL_TRACES_EXPORTER === 'otlp' && url === '' && e.OTEL_SDK_DISABLED !== 'true')
    throw new ConfigError(
      'invalid configuration:\n  OTEL_TRACES_EXPORTER: otlp needs OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
    )
  return {
    enabled,
    url,
    serviceName: e.OTEL_SERVICE_NAME,
    sampler: e.OTEL_TRACES_SAMPLER,
    ratio: e.OTEL_TRACES_SAMPLER_ARG ?? 1,
    scheduleDelayMs: e.OTEL_BSP_SCHEDULE_DELAY,
  }
}
