import { z } from 'zod'
import * as In from './requests.js'
import * as Out from './shapes.js'

/** One operation of the HTTP API, as the OpenAPI document describes it. */
export interface Operation {
  method: 'get' | 'post' | 'patch' | 'delete'
  /** OpenAPI path; `/sw/…` paths are also served under `/sw/v1/…`. */
  path: string
  summary: string
  tag: 'signals' | 'board' | 'discovery' | 'admin' | 'agents' | 'viewer' | 'health'
  auth: 'none' | 'optional' | 'bearer' | 'admin'
  query?: z.ZodObject
  /** Request headers beyond Authorization and Content-Type (OpenAPI parameter objects). */
  headers?: object[]
  body?: z.ZodType
  /** Success status → body schema; `text` for non-JSON answers. */
  ok: Record<number, z.ZodType | { text: string }>
  /** Error codes this operation answers with, besides those every route may (invalid_request, unavailable). */
  errors?: string[]
}

const idParam = {
  in: 'path',
  name: 'id',
  required: true,
  schema: { type: 'string' },
  description: 'raw signal id or sw://<authority>/signals/<id> URI',
}
export const PATH_PARAMS: Record<string, object[]> = {
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
  { method: 'get', path: '/sw/wire', summary: 'Board metadata and live counts', tag: 'board', auth: 'none', ok: { 200: Out.Board } },
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
  {
    method: 'get',
    path: '/sw/openapi.json',
    summary: 'This document',
    tag: 'discovery',
    auth: 'none',
    ok: { 200: { text: 'application/json' } },
  },
  {
    method: 'get',
    path: '/sw/admin/wire',
    summary: 'Board metadata (admin)',
    tag: 'admin',
    auth: 'admin',
    ok: { 200: Out.Board },
    errors: ['unauthorized', 'admin_disabled'],
  },
  {
    method: 'patch',
    path: '/sw/admin/wire',
    summary: 'Change name, description, allowedSignalTypes',
    tag: 'admin',
    auth: 'admin',
    body: In.BoardPatch,
    ok: { 200: Out.Board },
    errors: ['unauthorized', 'admin_disabled'],
  },
  {
    method: 'get',
    path: '/sw/admin/rules',
    summary: 'List publish rules',
    tag: 'admin',
    auth: 'admin',
    ok: { 200: Out.Rules },
    errors: ['unauthorized', 'admin_disabled'],
  },
  {
    method: 'post',
    path: '/sw/admin/rules',
    summary: 'Add an allow or deny rule (201; 200 when it exists)',
    tag: 'admin',
    auth: 'admin',
    body: In.NewRule,
    ok: { 200: Out.RuleAnswer, 201: Out.RuleAnswer },
    errors: ['unauthorized', 'admin_disabled'],
  },
  {
    method: 'delete',
    path: '/sw/admin/rules/{ruleId}',
    summary: 'Remove a rule',
    tag: 'admin',
    auth: 'admin',
    ok: { 200: Out.Ok },
    errors: ['unauthorized', 'admin_disabled', 'not_found'],
  },
  {
    method: 'delete',
    path: '/sw/admin/signals/{id}',
    summary: 'Moderation removal',
    tag: 'admin',
    auth: 'admin',
    ok: { 200: Out.Ok },
    errors: ['unauthorized', 'admin_disabled', 'not_found'],
  },
  {
    method: 'post',
    path: '/sw/admin/signals/{id}/pin',
    summary: 'Pin a signal (exempt from expiry)',
    tag: 'admin',
    auth: 'admin',
    ok: { 200: Out.PinAnswer },
    errors: ['unauthorized', 'admin_disabled', 'not_found'],
  },
  {
    method: 'delete',
    path: '/sw/admin/signals/{id}/pin',
    summary: 'Unpin a signal',
    tag: 'admin',
    auth: 'admin',
    ok: { 200: Out.PinAnswer },
    errors: ['unauthorized', 'admin_disabled', 'not_found'],
  },
  { method: 'get', path: '/.well-known/wire', summary: 'Discovery document', tag: 'discovery', auth: 'none', ok: { 200: Out.Discovery } },
  {
    method: 'get',
    path: '/.well-known/oauth-protected-resource',
    summary: 'Protected resource metadata (RFC 9728)',
    tag: 'discovery',
    auth: 'none',
    ok: { 200: Out.ProtectedResource },
  },
  {
    method: 'get',
    path: '/auth.md',
    summary: 'How an agent gets and uses a token on this board (markdown)',
    tag: 'discovery',
    auth: 'none',
    ok: { 200: { text: 'text/markdown' } },
  },
  {
    method: 'get',
    path: '/.well-known/agent-card.json',
    summary: 'A2A agent card (0.3 JSON, or 1.0 with A2A-Version: 1.0)',
    tag: 'agents',
    auth: 'none',
    ok: { 200: { text: 'application/json' } },
  },
  {
    method: 'post',
    path: '/a2a',
    summary: 'A2A JSON-RPC (message/send runs read-signals or publish-signal)',
    tag: 'agents',
    auth: 'optional',
    body: JsonRpc,
    ok: { 200: rpc },
  },
  {
    method: 'post',
    path: '/mcp',
    summary: 'MCP Streamable HTTP, stateless (tools: wire_info, read_signals, get_signal, read_thread, publish_signal, register_identity)',
    tag: 'agents',
    auth: 'optional',
    body: JsonRpc,
    ok: { 200: rpc },
  },
  {
    method: 'get',
    path: '/mcp',
    summary: 'Answers 405: the MCP endpoint is stateless, POST only',
    tag: 'agents',
    auth: 'none',
    ok: { 405: rpc },
  },
  {
    method: 'delete',
    path: '/mcp',
    summary: 'Answers 405: the MCP endpoint is stateless, POST only',
    tag: 'agents',
    auth: 'none',
    ok: { 405: rpc },
  },
  {
    method: 'get',
    path: '/view',
    summary: 'The live web viewer (HTML; strict Content-Security-Policy)',
    tag: 'viewer',
    auth: 'none',
    ok: { 200: { text: 'text/html' } },
  },
  {
    method: 'get',
    path: '/view/{file}',
    summary: "The viewer's scripts, styles and the client library's modules",
    tag: 'viewer',
    auth: 'none',
    ok: { 200: { text: 'text/javascript' } },
    errors: ['not_found'],
  },
  { method: 'get', path: '/', summary: 'Liveness', tag: 'health', auth: 'none', ok: { 200: Out.Liveness } },
  { method: 'get', path: '/healthz', summary: 'Liveness', tag: 'health', auth: 'none', ok: { 200: Out.Healthy } },
  {
    method: 'get',
    path: '/readyz',
    summary: 'Readiness (503 while it cannot serve its role)',
    tag: 'health',
    auth: 'none',
    ok: { 200: Out.Readiness, 503: Out.Readiness },
  },
  { method: 'get', path: '/metrics', summary: 'Prometheus metrics', tag: 'health', auth: 'none', ok: { 200: { text: 'text/plain' } } },
]
