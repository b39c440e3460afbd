import { z } from 'zod'
import { ConfigError } from './errors.js'

// OpenTelemetry's standard variables (https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/)
// that Wire reads itself; the OTLP exporter also reads its own (OTEL_EXPORTER_OTLP_HEADERS, _TIMEOUT,
// _CERTIFICATE…) as the specification says.

const url = z.string().url().regex(/^https?:\/\//i, 'must be an http(s) URL').optional()
const SAMPLERS = ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'] as const

/** The zod fields, spread into the Env schema (so settingNames and the README table see them). */
export const otelEnv = {
  OTEL_SDK_DISABLED: z.enum(['true', 'false']).default('false'),
  OTEL_TRACES_EXPORTER: z.enum(['otlp', 'none']).optional(), // unset: otlp, once an endpoint is set
  OTEL_EXPORTER_OTLP_ENDPOINT: url, // the collector's base URL: traces go to <it>/v1/traces
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: url, // or the full traces URL
  OTEL_EXPORTER_OTLP_PROTOCOL: z.enum(['http/json']).optional(), // the one protocol Wire's exporter speaks
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: z.enum(['http/json']).optional(),
  OTEL_SERVICE_NAME: z.string().trim().min(1).max(200).optional(), // default: wire-<role>
  OTEL_TRACES_SAMPLER: z.enum(SAMPLERS).default('parentbased_always_on'),
  OTEL_TRACES_SAMPLER_ARG: z.coerce.number().min(0).max(1).optional(), // the ratio of the *traceidratio samplers (default 1)
  OTEL_BSP_SCHEDULE_DELAY: z.coerce.number().int().min(0).max(3_600_000).default(5000), // ms between span exports
}

const OtelEnv = z.object(otelEnv)
type OtelEnv = z.infer<typeof OtelEnv>

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
    throw new ConfigError('invalid configuration:\n  OTEL_TRACES_EXPORTER: otlp needs OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT')
  return {
    enabled,
    url,
    serviceName: e.OTEL_SERVICE_NAME,
    sampler: e.OTEL_TRACES_SAMPLER,
    ratio: e.OTEL_TRACES_SAMPLER_ARG ?? 1,
    scheduleDelayMs: e.OTEL_BSP_SCHEDULE_DELAY,
  }
}
