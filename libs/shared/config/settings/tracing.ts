import { choice, group, httpUrl, int, optionalChoice, optionalRatio, setting, text } from '../kinds.js'

// OpenTelemetry's standard variables (https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/)
// that Wire reads itself; the OTLP exporter also reads its own (OTEL_EXPORTER_OTLP_HEADERS, _TIMEOUT,
// _CERTIFICATE…) as the specification says. config/tracing.ts turns them into TracingSettings.

export const SAMPLERS = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const

export const tracing = group(
  'Tracing',
  "(OpenTelemetry's standard variables; off unless an endpoint is set; [docs/operations.md](docs/operations.md#tracing))",
  {
    OTEL_EXPORTER_OTLP_ENDPOINT: setting(
      httpUrl(),
      "The collector's OTLP/HTTP base URL: spans of publishes, page reads and wake-ups go to `<it>/v1/traces` as JSON; unset, nothing is loaded or traced.",
      { shown: 'unset (off)' },
    ),
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: setting(httpUrl(), 'The full traces URL instead (taken as is).'),
    OTEL_EXPORTER_OTLP_PROTOCOL: setting(
      optionalChoice(['http/json']),
      "The one protocol Wire's exporter speaks; any other value is a configuration error.",
      { shown: '`http/json`' },
    ),
    OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: setting(optionalChoice(['http/json']), 'The same, for traces only.', { shown: '`http/json`' }),
    OTEL_TRACES_EXPORTER: setting(optionalChoice(['otlp', 'none']), '`none` turns tracing off with an endpoint set.', { shown: '`otlp`' }),
    OTEL_SDK_DISABLED: setting(choice(['true', 'false'], 'false'), '`true` turns tracing off.'),
    OTEL_SERVICE_NAME: setting(text(200), "The spans' `service.name` (`wire-writer`, `wire-reader`, `wire-server`…).", {
      shown: '`wire-<role>`',
    }),
    OTEL_TRACES_SAMPLER: setting(
      choice(SAMPLERS, 'parentbased_always_on'),
      "`always_on`, `always_off`, `traceidratio` or their `parentbased_` forms (a publish follows its client's `traceparent` decision).",
    ),
    OTEL_TRACES_SAMPLER_ARG: setting(optionalRatio(), 'The ratio of the `traceidratio` samplers.', { shown: '`1`' }),
    OTEL_BSP_SCHEDULE_DELAY: setting(
      int(0, 3_600_000, 5000),
      'Milliseconds between span exports (spans still buffered are flushed at shutdown).',
    ),
  },
)
