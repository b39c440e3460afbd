import { z } from 'zod'
import * as Out from './shapes.js'

// What every API's route table (routes.ts: the board's; the aggregator's) is made of, and the
// operations that more than one API serves.
/** One operation of an HTTP API, as its OpenAPI document describes it (openapi.ts). */
export interface Operation {
  method: 'get' | 'post' | 'patch' | 'delete'
  /** OpenAPI path; the board's `/sw/…` paths are also served under `/sw/v1/…`. */
  path: string
  summary: string
  tag: string
  auth: 'none' | 'optional' | 'bearer' | 'admin'
  query?: z.ZodObject
  /** Request headers beyond Authorization and Content-Type (OpenAPI parameter objects). */
  headers?: object[]
  body?: z.ZodType
  /** Success status (or `default`) → body schema; `text` for non-JSON answers; `none` (its description) for a body not described here. */
  ok: Partial<Record<number | 'default', z.ZodType | { text: string } | { none: string }>>
  /** Error codes this operation answers with, besides those every route may (invalid_request, unavailable). */
  errors?: string[]
}

/** An API's document: its operations and what they share (openapi.ts). The board's is BOARD_API. */
export interface ApiTable {
  description: string
  operations: Operation[]
  /** Each path parameter's OpenAPI parameter objects, by its name in the paths. */
  pathParams: Record<string, object[]>
  tags: string[]
  securitySchemes: Record<string, object>
  /** The board's: every `/sw/…` path is also served under `/sw/v1/…`. */
  v1Aliases?: boolean
}

export const JsonRpc = z.looseObject({ jsonrpc: z.literal('2.0'), method: z.string() }).describe('a JSON-RPC 2.0 request')
export const rpc = { text: 'application/json' } // JSON-RPC answers are described by MCP and A2A, not here

type Method = Operation['method']
/** An admin route: the admin token, and the admin door's errors (not_found too where the path names a thing). */
export const admin = (method: Method, path: string, summary: string, ok: Operation['ok'], body?: z.ZodType): Operation => ({
  method,
  path,
  summary,
  tag: 'admin',
  auth: 'admin',
  ...(body && { body }),
  ok,
  errors: ['unauthorized', 'admin_disabled', ...(path.includes('{') ? ['not_found'] : [])],
})
/** A route anyone may call, answering `ok` (200 unless said). */
export const open = (
  method: Method,
  path: string,
  summary: string,
  tag: Operation['tag'],
  ok: NonNullable<Operation['ok'][number]>,
  status = 200,
): Operation => ({
  method,
  path,
  summary,
  tag,
  auth: 'none',
  ok: { [status]: ok },
})

/** POST /mcp, stateless (libs/shared/http mcpRoutes), and its GET and DELETE answering 405: the board's and the aggregator's. */
export const mcpOperations = (tools: string, auth: Operation['auth']): Operation[] => [
  {
    method: 'post',
    path: '/mcp',
    summary: `MCP Streamable HTTP, stateless (tools: ${tools})`,
    tag: 'agents',
    auth,
    body: JsonRpc,
    ok: { 200: rpc },
  },
  ...(['get', 'delete'] as const).map((method) =>
    open(method, '/mcp', 'Answers 405: the MCP endpoint is stateless, POST only', 'agents', rpc, 405),
  ),
]

/** libs/shared/http healthRoutes, which every role serves. */
export const HEALTH_OPERATIONS: Operation[] = [
  open('get', '/', 'Liveness', 'health', Out.Liveness),
  open('get', '/healthz', 'Liveness', 'health', Out.Healthy),
  {
    method: 'get',
    path: '/readyz',
    summary: 'Readiness (503 while it cannot serve its role)',
    tag: 'health',
    auth: 'none',
    ok: { 200: Out.Readiness, 503: Out.Readiness },
  },
  open('get', '/metrics', 'Prometheus metrics', 'health', { text: 'text/plain' }),
]
