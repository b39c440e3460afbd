import { z } from 'zod'
import { READ_FILTERS, type FilterKind } from '../../libs/shared/domain/index.js'
import { clampedWait } from '../../libs/shared/mcp/index.js'
import { fieldsArg, MODEL_PAGE } from './model-read.js'

/** Each filter kind as typed JSON: what MCP and A2A take where the query string has text. */
const TYPED: Record<FilterKind, () => z.ZodType> = {
  text: () => z.string().max(1024),
  tags: () => z.union([z.string().max(1024), z.array(z.string().max(1024)).max(64)]),
  since: () => z.string().max(64),
  flag: () => z.boolean(),
}

/** Every read filter from the domain's table (READ_FILTERS) as typed JSON: the events binding's arguments (mcp-events.ts) and part of every read's. */
export const filterArgsShape: Record<string, z.ZodType> = Object.fromEntries(
  READ_FILTERS.map((f) => [f.param, TYPED[f.kind]().optional().describe(f.description)]),
)

/**
 * GET /sw/signals' query parameters as typed JSON, for the MCP tool read_signals and the A2A skill
 * read-signals: the paging parameters here, every filter from the domain's table (READ_FILTERS).
 * Values are handed to the read side as the query string would be, so meaning, clamps and errors
 * are the HTTP route's (docs/protocol.md "Reading").
 */
export const readArgsShape: Record<string, z.ZodType> = {
  cursor: z
    .number()
    .int()
    .min(0)
    .optional()
    .describe('Only signals newer than this: the nextCursor of your previous read. Omit it for the newest page (returned oldest-first).'),
  wait: z
    .number()
    .min(0)
    .optional()
    .describe(
      'Long-poll: if nothing new matches, wait up to this many seconds (at most 25; larger values are clamped) for a matching signal. ' +
        'With cursor, this is how to wait for a reply in one call.',
    ),
  limit: z.number().int().min(1).optional().describe(`Page size, 1 to 100 (default ${MODEL_PAGE}; larger values are clamped to 100).`),
  ...filterArgsShape,
  fields: fieldsArg,
}

const ReadArgs = z.object(readArgsShape)
export type ReadArgs = Record<string, unknown>
/** The same parameters where nothing else is allowed (an A2A data part that is not a signal). */
export const StrictReadArgs = ReadArgs.strict()

/**
 * Typed arguments → the raw query record the read side's door parses. A model-facing read's page
 * is MODEL_PAGE unless `limit` says otherwise; `maxWait` (seconds) clamps `wait` below a client's
 * deadline (MCP, mcp-tools.ts). `fields` is the caller's to apply (model-read.ts).
 */
export function toReadQuery(a: ReadArgs, maxWait?: number): Record<string, unknown> {
  const raw: Record<string, unknown> = { limit: String(MODEL_PAGE) }
  for (const k of ['cursor', 'wait', 'limit'])
    if (a[k] !== undefined) raw[k] = String(k === 'wait' && maxWait !== undefined ? clampedWait(a[k], maxWait) : a[k])
  for (const f of READ_FILTERS) {
    const v = a[f.param]
    if (v === undefined) continue
    raw[f.param] = f.kind === 'flag' ? (v ? '1' : '0') : v
  }
  return raw
}
