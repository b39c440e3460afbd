import { z } from 'zod'

// The aggregator's API as zod shapes: what its routes take, declared once for HTTP and MCP.

/** GET /registry/boards' query, and MCP list_boards' arguments (numbers as JSON or as query text). */
export const ListQuery = z.object({
  cursor: z.coerce.number().int().min(0).optional().describe('nextCursor of the previous page'),
  limit: z.coerce.number().int().min(1).max(100).default(50).describe('1..100, default 50'),
  name: z.string().trim().min(1).max(200).optional().describe('substring of the name'),
  feature: z.string().trim().min(1).max(64).optional().describe('a feature the board lists'),
  status: z.enum(['up', 'down', 'dropped']).optional().describe('up, down or dropped'),
})
export type ListQuery = z.infer<typeof ListQuery>

/**
 * GET /search/signals' query as typed JSON: MCP search_signals' arguments. The route itself parses
 * the query string with the board's read parser (search/search.ts), and so does the tool, with
 * these values as text.
 */
export const SearchArgs = z.object({
  q: z.string().max(256).optional().describe('full text over payload text (websearch syntax)'),
  tag: z.string().max(1024).optional().describe('tag, comma-separated or repeated (any)'),
  type: z.string().max(200).optional().describe('signal type'),
  origin: z.string().max(200).optional().describe('origin identity id'),
  board: z.string().max(255).optional().describe('board authority'),
  since: z.string().max(64).optional().describe('ISO 8601, Unix seconds, or a duration such as 15m'),
  cursor: z.number().int().min(0).optional().describe('nextCursor of the previous page'),
  limit: z.number().int().min(1).max(100).optional().describe('1..100'),
  wait: z.number().min(0).max(25).optional().describe('seconds to wait for a match, at most 25'),
})
