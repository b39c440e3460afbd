import { parseMetrics } from './support.js'

// Metric names in PromQL expressions and in /metrics output, for checking one against the other.

/** PromQL's functions, aggregations and keywords that the dashboard and alerts use (anything else is a metric). */
const WORDS = new Set(
  'sum max min avg count rate irate increase delta histogram_quantile clamp_min clamp_max time vector scalar absent min_over_time max_over_time avg_over_time topk bottomk by without and or unless on ignoring group_left group_right bool offset inf nan'.split(
    ' ',
  ),
)

/** The metric names an expression reads, in order of first use. */
export function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""') // label values
    .replace(/\{[^}]*\}/g, '') // label matchers
    .replace(/\[[^\]]*\]/g, '') // ranges
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, '') // label lists
  const names = [...bare.matchAll(/(?<![\w.$])[a-zA-Z_:][\w:]*/g)].map((m) => m[0]).filter((n) => !WORDS.has(n.toLowerCase()))
  return [...new Set(names)]
}

/** Every series name a /metrics text shows, with the family names of its # TYPE lines. */
export function exportedNames(text: string): Set<string> {
  const names = new Set(parseMetrics(text).map((m) => m.name))
  for (const m of text.matchAll(/^# TYPE (\S+) /gm)) names.add(m[1]!)
  return names
}
