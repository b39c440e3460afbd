import * as In from './requests.js'
import * as Out from './shapes.js'
import { admin, type ApiTable, HEALTH_OPERATIONS, JsonRpc, mcpOperations, type Operation, open, rpc } from './operations.js'

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

/** Every route Wire serves. test/http/openapi.test.ts fails when a served route is missing here. */
const OPERATIONS: Operation[] = [
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
