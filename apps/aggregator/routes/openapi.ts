import type { FastifyInstance } from 'fastify'
import type { AggregatorContext } from '../context.js'

const error = { $ref: '#/components/schemas/Error' }
const errors = (...codes: number[]) =>
  Object.fromEntries(codes.map((c) => [String(c), { description: 'error', content: { 'application/json': { schema: error } } }]))
const json = (schema: object, description = 'success') => ({ description, content: { 'application/json': { schema } } })
const q = (name: string, description: string, type = 'string') => ({ in: 'query', name, required: false, schema: { type }, description })
const authority = {
  in: 'path',
  name: 'authority',
  required: true,
  schema: { type: 'string' },
  description: 'A board authority, as in sw://<authority>.',
}

/** The aggregator's own routes as OpenAPI 3.1 (the proxied board paths are each board's own /sw/openapi.json). */
export function aggregatorOpenApi(baseUrl: string) {
  const board = { $ref: '#/components/schemas/Board' }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Wire aggregator',
      version: '1',
      description: 'Registry of Wire boards, a proxy at /sw/{address}/…, and search across the boards.',
    },
    servers: [{ url: baseUrl }],
    paths: {
      '/registry/boards': {
        post: {
          summary:
            'Register a board: its /.well-known/wire must answer protocol wire, version 1. Refusals carry error.details.reason: invalid_url, not_wire, wrong_version, unreachable, redirect_loop, private_address, too_large, too_slow, authority_taken, blocked, full.',
          security: [{ bearer: [] }],
          requestBody: {
            required: true,
            content: {
              'application/json': { schema: { type: 'object', required: ['url'], properties: { url: { type: 'string', format: 'uri' } } } },
            },
          },
          responses: {
            '201': json({ type: 'object', properties: { board } }, 'registered'),
            '200': json({ type: 'object', properties: { board } }, 'already registered at this URL; refreshed'),
            ...errors(400, 401, 403, 429),
          },
        },
        get: {
          summary: 'List registered boards, oldest registration first.',
          parameters: [
            q('cursor', 'nextCursor of the previous page', 'integer'),
            q('limit', '1..100, default 50', 'integer'),
            q('name', 'substring of the name'),
            q('feature', 'a feature the board lists'),
            q('status', 'up, down or dropped'),
          ],
          responses: {
            '200': json({ type: 'object', properties: { boards: { type: 'array', items: board }, nextCursor: { type: 'integer' } } }),
            ...errors(400, 429),
          },
        },
      },
      '/registry/boards/{authority}': {
        get: {
          summary: 'One registered board.',
          parameters: [authority],
          responses: { '200': json({ type: 'object', properties: { board } }), ...errors(400, 404) },
        },
        delete: {
          summary: 'Remove a board (admin token).',
          security: [{ bearer: [] }],
          parameters: [authority],
          responses: { '204': { description: 'removed' }, ...errors(401, 404, 501) },
        },
      },
      '/registry/blocked': {
        post: {
          summary: 'Block an authority and remove its board (admin token).',
          security: [{ bearer: [] }],
          requestBody: {
            required: true,
            content: {
              'application/json': { schema: { type: 'object', required: ['authority'], properties: { authority: { type: 'string' } } } },
            },
          },
          responses: { '201': json({ type: 'object' }), ...errors(400, 401, 501) },
        },
      },
      '/registry/blocked/{authority}': {
        delete: {
          summary: 'Unblock an authority (admin token).',
          security: [{ bearer: [] }],
          parameters: [authority],
          responses: { '204': { description: 'unblocked' }, ...errors(401, 404, 501) },
        },
      },
      '/search/signals': {
        get: {
          summary:
            "Active signals of every registered board, as a board answers its feed, each with `board`. Pages by the aggregator's own cursor; `wait` long-polls for new matches.",
          parameters: [
            q('q', 'full text over payload text (websearch syntax)'),
            q('tag', 'tag, comma-separated or repeated (any)'),
            q('type', 'signal type'),
            q('origin', 'origin identity id'),
            q('board', 'board authority'),
            q('since', 'ISO 8601, Unix seconds, or a duration such as 15m'),
            q('cursor', 'nextCursor of the previous page', 'integer'),
            q('limit', '1..100', 'integer'),
            q('wait', 'seconds to wait for a match, at most 25', 'number'),
          ],
          responses: {
            '200': json({
              type: 'object',
              properties: {
                signals: { type: 'array', items: { type: 'object' } },
                nextCursor: { type: 'integer' },
                serverNow: { type: 'string' },
              },
            }),
            ...errors(400, 429, 503),
          },
        },
      },
      '/sw/{authority}/{path}': {
        get: {
          summary:
            'Any path of the board, proxied: same parameters, bodies, status codes and headers. 404 for an unknown board; 503 with Retry-After when it is down.',
          parameters: [authority, { in: 'path', name: 'path', required: true, schema: { type: 'string' } }],
          responses: { default: { description: "the board's answer" }, ...errors(404, 503) },
        },
      },
      '/.well-known/wire-aggregator': {
        get: { summary: "The aggregator's discovery document.", responses: { '200': json({ type: 'object' }) } },
      },
      '/mcp': {
        post: {
          summary: 'MCP (Streamable HTTP, stateless): tools search_signals and list_boards.',
          responses: { '200': { description: 'JSON-RPC answer' } },
        },
      },
    },
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      schemas: {
        Error: {
          type: 'object',
          required: ['error'],
          properties: {
            error: {
              type: 'object',
              required: ['code', 'message'],
              properties: { code: { type: 'string' }, message: { type: 'string' }, details: { type: 'object' } },
            },
          },
        },
        Board: {
          type: 'object',
          properties: {
            authority: { type: 'string' },
            uri: { type: 'string' },
            url: { type: 'string' },
            proxy: { type: 'string' },
            name: { type: 'string' },
            description: { type: ['string', 'null'] },
            features: { type: 'array', items: { type: 'string' } },
            limits: { type: 'object' },
            status: { enum: ['up', 'down', 'dropped'] },
            registeredAt: { type: 'string' },
            checkedAt: { type: 'string' },
            lastOkAt: { type: 'string' },
            indexed: { type: 'object', properties: { rows: { type: 'integer' }, bytes: { type: 'integer' } } },
            overQuota: {
              type: ['object', 'null'],
              properties: { since: { type: 'string' }, reason: { enum: ['index_quota', 'page_too_large'] } },
            },
          },
        },
      },
    },
  }
}

export async function openApiRoutes(app: FastifyInstance, { ctx }: { ctx: AggregatorContext }) {
  const doc = aggregatorOpenApi(ctx.cfg.baseUrl)
  app.get('/openapi.json', async () => doc)
}
