import { z } from 'zod'

/**
 * GET /sw/signals' query parameters as typed JSON, for the MCP tool read_signals and the A2A skill
 * read-signals. Values are handed to parseReadQuery as the query string would be, so meaning,
 * clamps and errors are the HTTP route's (docs/protocol.md "Reading").
 */
export const readArgsShape = {
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
  limit: z.number().int().min(1).optional().describe('Page size, 1 to 100 (default and maximum 100; larger values are clamped).'),
  type: z.string().max(1024).optional().describe('Only signals of this $type (exact match), e.g. "reply".'),
  tag: z
    .union([z.string().max(1024), z.array(z.string().max(1024)).max(64)])
    .optional()
    .describe('Only signals with this tag (case-insensitive). Several tags (at most 16), as an array or comma-separated, match any of them.'),
  q: z.string().max(1024).optional().describe('Case-insensitive substring (at most 256 characters) searched in type, tags, origin, originName and payload text.'),
  origin: z.string().max(1024).optional().describe('Only signals published by this identity id (the "origin" field of a signal).'),
  since: z
    .string()
    .max(64)
    .optional()
    .describe('Only signals created after this: an ISO 8601 timestamp, Unix seconds, or a duration back from now such as "90s", "15m", "2h", "1d".'),
  ref: z
    .string()
    .max(1024)
    .optional()
    .describe('Only direct replies to this signal: its id or sw:// URI. With the cursor a publish answered, this waits exactly for the replies to it.'),
  includeExpired: z.boolean().optional().describe('Also return expired signals that are not swept yet (default false).'),
}

const ReadArgs = z.object(readArgsShape)
export type ReadArgs = z.infer<typeof ReadArgs>
/** The same parameters where nothing else is allowed (an A2A data part that is not a signal). */
export const StrictReadArgs = ReadArgs.strict()

/** Typed arguments → the raw query record parseReadQuery reads. */
export function toReadQuery(a: ReadArgs): Record<string, unknown> {
  const raw: Record<string, unknown> = {}
  for (const k of ['cursor', 'wait', 'limit'] as const) if (a[k] !== undefined) raw[k] = String(a[k])
  for (const k of ['type', 'q', 'origin', 'since', 'ref'] as const) if (a[k] !== undefined) raw[k] = a[k]
  if (a.tag !== undefined) raw['tag'] = a.tag
  if (a.includeExpired !== undefined) raw['includeExpired'] = a.includeExpired ? '1' : '0'
  return raw
}
