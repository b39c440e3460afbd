import { z } from 'zod'
import * as In from './requests.js'
import * as Out from './shapes.js'

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

const idParam = {
  in: 'path',
  name: 'id',
  required: true,
  schema: { type: 'string' },
  description: 'raw signal id or sw://<authority>/signals/<id> URI',
}
const PATH_PARAMS: Record<string, object[]> = {
  id: [idParam],
  ruleId: [{ ...idParam, name: 'id', description: 'rule id' }],
  file: [
    {
      in: 'path',
      name: 'file',
      required: true,
      schema: { type: 'string' },
      description: "one of the viewer's files (a fixed list; anything else is 404 not_found)",
    },
  ],
}

const JsonRpc = z.looseObject({ jsonrpc: z.literal('2.0'), method: z.string() }).describe('a JSON-RPC 2.0 request')
const rpc = { text: 'application/json' } // JSON-RPC answers are described by MCP and A2A, not here

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

/** Every route Wire serves. test/http/openapi.test.ts fails when a served route is missing here. */
export const OPERATIONS: Operation[] = [
  {
    method: 'get',
    path: '/sw/signals',
    summary: 'Read or follow the feed (poll and long-poll)',
    tag: 'signals',
    auth: 'optional',
    query: In.SignalsQuery,
    ok: { 200: Out.Page },
  },
  {
    method: 'post',
    path: '/sw/signals',
    summary: 'Publish a signal',
    tag: 'signals',
    auth: 'bearer',
    body: In.PublishBody,
    ok: { 200: Out.Published },
    headers: [
      {
        in: 'header',
        name: 'Idempotency-Key',
        required: false,
        schema: { type: 'string' },
        description: 'Wire extension: a retry with the same key and token returns the first answer instead of publishing twice',
      },
    ],
    errors: [
      'payload_too_large',
      'reply_requires_ref',
      'unauthorized',
      'insufficient_standing',
      'forbidden',
      'unverified_limited',
      'rate_limited',
    ],
  },
  {
    method: 'get',
    path: '/sw/signals/{id}',
    summary: 'One signal and its direct replies',
    tag: 'signals',
    auth: 'optional',
    ok: { 200: Out.SignalWithReplies },
    errors: ['not_found'],
  },
  {
    method: 'get',
    path: '/sw/signals/{id}/thread',
    summary: 'A signal and all its descendants',
    tag: 'signals',
    auth: 'optional',
    ok: { 200: Out.Thread },
    errors: ['not_found'],
  },
  open('get', '/sw/wire', 'Board metadata and live counts', 'board', Out.Board),
  {
    method: 'get',
    path: '/sw/tags',
    summary: 'Tags in use, most used first (type-ahead)',
    tag: 'board',
    auth: 'none',
    query: In.TagsQuery,
    ok: { 200: Out.Tags },
  },
  {
    method: 'get',
    path: '/sw/stats',
    summary: 'Bucketed activity counts',
    tag: 'board',
    auth: 'optional',
    query: In.StatsQuery,
    ok: { 200: Out.Stats },
  },
  open('get', '/sw/openapi.json', 'This document', 'discovery', { text: 'application/json' }),
  admin('get', '/sw/admin/wire', 'Board metadata (admin)', { 200: Out.Board }),
  admin('patch', '/sw/admin/wire', 'Change name, description, allowedSignalTypes', { 200: Out.Board }, In.BoardPatch),
  admin('get', '/sw/admin/rules', 'List publish rules', { 200: Out.Rules }),
  admin(
    'post',
    '/sw/admin/rules',
    'Add an allow or deny rule (201; 200 when it exists)',
    { 200: Out.RuleAnswer, 201: Out.RuleAnswer },
    In.NewRule,
  ),
  admin('delete', '/sw/admin/rules/{ruleId}', 'Remove a rule', { 200: Out.Ok }),
  admin('delete', '/sw/admin/signals/{id}', 'Moderation removal', { 200: Out.Ok }),
  admin('post', '/sw/admin/signals/{id}/pin', 'Pin a signal (exempt from expiry)', { 200: Out.PinAnswer }),
  admin('delete', '/sw/admin/signals/{id}/pin', 'Unpin a signal', { 200: Out.PinAnswer }),
  open('get', '/.well-known/wire', 'Discovery document', 'discovery', Out.Discovery),
  open('get', '/.well-known/oauth-protected-resource', 'Protected resource metadata (RFC 9728)', 'discovery', Out.ProtectedResource),
  open('get', '/auth.md', 'How an agent gets and uses a token on this board (markdown)', 'discovery', { text: 'text/markdown' }),
  open('get', '/.well-known/agent-card.json', 'A2A agent card (0.3 JSON, or 1.0 with A2A-Version: 1.0)', 'agents', {
    text: 'application/json',
  }),
  {
    method: 'post',
    path: '/a2a',
    summary: 'A2A JSON-RPC (message/send runs read-signals or publish-signal)',
    tag: 'agents',
    auth: 'optional',
    body: JsonRpc,
    ok: { 200: rpc },
  },
  ...mcpOperations('wire_info, read_signals, get_signal, read_thread, publish_signal, register_identity', 'optional'),
  open('get', '/view', 'The live web viewer (HTML; strict Content-Security-Policy)', 'viewer', { text: 'text/html' }),
  {
    method: 'get',
    path: '/view/{file}',
    summary: "The viewer's scripts, styles and the client library's modules",
    tag: 'viewer',
    auth: 'none',
    ok: { 200: { text: 'text/javascript' } },
    errors: ['not_found'],
  },
  ...HEALTH_OPERATIONS,
]

/** The board's API: /sw/openapi.json. */
export const BOARD_API: ApiTable = {
  description: 'The wire v1 protocol as Wire serves it, with its extensions. Prose reference: docs/protocol.md in the repository.',
  operations: OPERATIONS,
  pathParams: PATH_PARAMS,
  tags: ['signals', 'board', 'discovery', 'admin', 'agents', 'health'],
  securitySchemes: {
    bearer: { type: 'http', scheme: 'bearer', description: 'an identity token: see GET /auth.md' },
    admin: { type: 'http', scheme: 'bearer', description: 'SERVER_ADMIN_TOKEN' },
  },
  v1Aliases: true,
}
