import { z } from 'zod'
import { adminOperation, type ApiTable, HEALTH_OPERATIONS, mcpOperations, openOperation } from '../../../libs/shared/api/index.js'

// The aggregator's API as zod shapes and one route table: what its routes take and answer, declared
// once for HTTP, MCP (its tools' arguments) and its OpenAPI document (libs/shared/api's generator).

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

const int = z.number().int()
const Board = z
  .object({
    authority: z.string(),
    uri: z.string().describe('sw://<authority>'),
    url: z.string().describe("the board's base URL"),
    proxy: z.string().describe('the same board through this aggregator'),
    name: z.string(),
    description: z.string().nullable(),
    features: z.array(z.string()),
    limits: z.record(z.string(), z.unknown()),
    status: z.enum(['up', 'down', 'dropped']),
    registeredAt: z.string(),
    checkedAt: z.string(),
    lastOkAt: z.string(),
    indexed: z.object({ rows: int, bytes: int }),
    overQuota: z
      .object({ since: z.string(), reason: z.enum(['index_quota', 'page_too_large']) })
      .nullable()
      .describe('set while the board is not followed'),
  })
  .meta({ id: 'Board' })
const BoardAnswer = z.object({ board: Board })
const Url = z.object({ url: z.url() })
const AuthorityBody = z.object({ authority: z.string() })
const SearchPage = z.object({
  signals: z.array(
    z.looseObject({ board: z.string().describe('the authority it came from') }).describe('a signal as its board emitted it, plus board'),
  ),
  nextCursor: int,
  serverNow: z.string(),
})
const Discovery = z.object({
  protocol: z.literal('wire'),
  version: z.literal('1'),
  role: z.literal('aggregator'),
  registry: z.string(),
  search: z.string(),
  proxy: z.string(),
  mcp: z.string(),
  openapi: z.string(),
  features: z.array(z.string()),
})

const authority = {
  in: 'path',
  name: 'authority',
  required: true,
  schema: { type: 'string' },
  description: 'A board authority, as in sw://<authority>.',
}

/** Every route the aggregator serves: its OpenAPI document at /openapi.json (routes/discovery.ts). */
export const AGGREGATOR_API: ApiTable = {
  description:
    "Registry of Wire boards, a proxy at /sw/{address}/…, and search across the boards (the proxied board paths are each board's own /sw/openapi.json).",
  tags: ['registry', 'search', 'proxy', 'discovery', 'admin', 'agents', 'health'],
  securitySchemes: {
    bearer: {
      type: 'http',
      scheme: 'bearer',
      description: 'any bearer token of at least 8 characters: registrations are budgeted per token',
    },
    admin: { type: 'http', scheme: 'bearer', description: 'SERVER_ADMIN_TOKEN' },
  },
  pathParams: { authority: [authority], path: [{ in: 'path', name: 'path', required: true, schema: { type: 'string' } }] },
  operations: [
    {
      method: 'post',
      path: '/registry/boards',
      summary:
        'Register a board: its /.well-known/wire must answer protocol wire, version 1 (201 registered; 200 already registered at this URL, refreshed). Refusals carry error.details.reason: invalid_url, not_wire, wrong_version, unreachable, redirect_loop, private_address, too_large, too_slow, authority_taken, blocked, full.',
      tag: 'registry',
      auth: 'bearer',
      body: Url,
      ok: { 201: BoardAnswer, 200: BoardAnswer },
      errors: ['unauthorized', 'forbidden', 'rate_limited'],
    },
    {
      method: 'get',
      path: '/registry/boards',
      summary: 'List registered boards, oldest registration first.',
      tag: 'registry',
      auth: 'none',
      query: ListQuery,
      ok: { 200: z.object({ boards: z.array(Board), nextCursor: int }) },
      errors: ['rate_limited'],
    },
    {
      method: 'get',
      path: '/registry/boards/{authority}',
      summary: 'One registered board.',
      tag: 'registry',
      auth: 'none',
      ok: { 200: BoardAnswer },
      errors: ['not_found'],
    },
    adminOperation('delete', '/registry/boards/{authority}', 'Remove a board (admin token).', { 204: { none: 'removed' } }),
    adminOperation(
      'post',
      '/registry/blocked',
      'Block an authority and remove its board (admin token).',
      { 201: z.object({ authority: z.string(), blocked: z.literal(true) }) },
      AuthorityBody,
    ),
    adminOperation('delete', '/registry/blocked/{authority}', 'Unblock an authority (admin token).', { 204: { none: 'unblocked' } }),
    {
      method: 'get',
      path: '/search/signals',
      summary:
        "Active signals of every registered board, as a board answers its feed, each with `board`. Pages by the aggregator's own cursor; `wait` long-polls for new matches.",
      tag: 'search',
      auth: 'none',
      query: SearchArgs,
      ok: { 200: SearchPage },
      errors: ['rate_limited'],
    },
    {
      method: 'get',
      path: '/sw/{authority}/{path}',
      summary:
        'Any path of the board, proxied: same parameters, bodies, status codes and headers. 404 for an unknown board; 503 with Retry-After when it is down.',
      tag: 'proxy',
      auth: 'none',
      ok: { default: { none: "the board's answer" } },
      errors: ['not_found'],
    },
    openOperation('get', '/.well-known/wire-aggregator', "The aggregator's discovery document.", 'discovery', Discovery),
    openOperation('get', '/openapi.json', 'This document', 'discovery', { text: 'application/json' }),
    ...mcpOperations('search_signals, list_boards', 'none'),
    ...HEALTH_OPERATIONS,
  ],
}
