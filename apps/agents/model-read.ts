import { z } from 'zod'
import { EMITTED_SIGNAL_FIELDS, invalid } from '../../libs/shared/domain/index.js'

/**
 * Reads sized for models. The HTTP JSON of a signal restates much of itself (`uri`, `originUri`
 * and `refUri` are its ids under the board's authority, `expiresAt` is `createdAt` + `ttl`,
 * `boostBits` is always 0, the payload repeats `$type` and `$tags`): a default read of 100 short
 * signals was ~60 KB, some 12k tokens of a model's context for one look at the board. MCP and A2A
 * reads answer a compact form by default, on a smaller page, and take `fields` for more or less.
 */

/** A model-facing read's page when the caller names no `limit` (HTTP's is 100). */
export const MODEL_PAGE = 20

/** The fields of a signal in its HTTP form, in that order: what `fields` may name. */
const SIGNAL_FIELDS = EMITTED_SIGNAL_FIELDS
type FieldName = (typeof SIGNAL_FIELDS)[number]
const KNOWN = new Set<string>(SIGNAL_FIELDS)

/** Derived from other fields or constant: never in the compact form. */
const DERIVED = new Set<string>(['uri', 'originUri', 'refUri', 'expiresAt', 'boostBits'])
/** Payload keys the envelope restates (`type`, `tags`, `refId`). */
const RESTATED = new Set(['$type', '$tags', '$refId'])

export type Fields = { kind: 'compact' } | { kind: 'full' } | { kind: 'pick'; names: readonly FieldName[] }

export const fieldsArg = z
  .union([z.string().max(512), z.array(z.string().max(32)).max(SIGNAL_FIELDS.length)])
  .optional()
  .describe(
    'What each signal carries. Default (omitted or "compact"): id, origin, type, payload, ttl and createdAt, with originName, tags, ' +
      'refId, pinned (true) and originVerified (false) when they say something; the payload without the $type/$tags/$refId it restates. ' +
      '"full": the HTTP API\'s form, payload bytes as stored. Or a list (array or comma-separated) of the HTTP form\'s fields, e.g. "id,type,payload".',
  )

/** The `fields` argument → what to answer; unknown names are invalid_request. */
export function parseFields(v: string | string[] | undefined): Fields {
  if (v === undefined) return { kind: 'compact' }
  const list = (Array.isArray(v) ? v : v.split(',')).map((x) => x.trim()).filter(Boolean)
  if (list.length === 1 && (list[0] === 'compact' || list[0] === 'full')) return { kind: list[0] }
  const unknown = list.filter((x) => !KNOWN.has(x))
  if (unknown.length || list.length === 0)
    throw invalid(
      `fields: ${unknown.length ? `unknown ${unknown.map((x) => JSON.stringify(x.slice(0, 32))).join(', ')}` : 'empty'}; use "compact", "full" or names among ${SIGNAL_FIELDS.join(', ')}`,
    )
  return { kind: 'pick', names: SIGNAL_FIELDS.filter((f) => list.includes(f)) }
}

/**
 * An answer of the read side (`{signals, …}` or `{signal, replies, …}`, as JSON text) with each
 * signal in the form `fields` asks for. "full" is the text unchanged.
 */
export function shapeAnswer(text: string, fields: Fields): string {
  if (fields.kind === 'full') return text
  const answer = JSON.parse(text) as Record<string, unknown>
  for (const key of ['signals', 'replies'] as const) {
    const list = answer[key]
    if (Array.isArray(list)) answer[key] = list.map((s) => shapeSignal(s as Record<string, unknown>, fields))
  }
  if (answer.signal !== undefined) answer.signal = shapeSignal(answer.signal as Record<string, unknown>, fields)
  return JSON.stringify(answer)
}

export function shapeSignal(s: Record<string, unknown>, fields: Fields): Record<string, unknown> {
  if (fields.kind === 'pick') return Object.fromEntries(fields.names.map((f) => [f, s[f]]))
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(s)) {
    if (DERIVED.has(k) || v === null || (Array.isArray(v) && v.length === 0)) continue
    // a verified origin is the norm and is left out; an unverified one is said (false); pinned only when true
    if ((k === 'originVerified' && v === true) || (k === 'pinned' && v === false)) continue
    out[k] = k === 'payload' ? payloadOf(v) : v
  }
  return out
}

function payloadOf(v: unknown): unknown {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return v
  return Object.fromEntries(Object.entries(v).filter(([k]) => !RESTATED.has(k)))
}

/** A signal in the form `fields` asked for: an object, its keys depending on `fields`. */
const SignalOut = z.record(z.string(), z.unknown()).describe('A signal, with the fields asked for (compact by default).')

/** The tools' outputSchema (MCP): what their structuredContent holds, the same JSON as their text. */
export const OUTPUT = {
  read: z.object({
    signals: z.array(SignalOut).describe('Oldest-first.'),
    nextCursor: z.number().int().describe('Pass as cursor to read only newer signals (or to wait for them).'),
    partial: z.boolean().optional().describe('The scan stopped at its budget: read on from nextCursor at once.'),
    serverNow: z.string(),
  }),
  one: z.object({ signal: SignalOut, replies: z.array(SignalOut).describe('Direct replies, oldest-first.'), serverNow: z.string() }),
  thread: z.object({ signals: z.array(SignalOut).describe('The root and every reply at any depth, oldest-first.') }),
}
