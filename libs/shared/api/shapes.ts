import { z } from 'zod'
import { LIMITS } from '../domain/index.js'

// What the HTTP API returns, as zod schemas: the OpenAPI document (openapi.ts) is generated from
// them, and test/http/openapi.test.ts validates real answers of every route against that document.

const timestamp = z.string().describe('ISO 8601 UTC timestamp with milliseconds')
const int = z.number().int()
const count = int.min(0)

export const ErrorBody = z
  .object({
    error: z.object({
      code: z.string().describe('the protocol error code, e.g. invalid_request (docs/protocol.md "Errors")'),
      message: z.string().describe('human text; never a stack or SQL'),
      details: z.record(z.string(), z.unknown()).optional().describe('limits and counts when useful'),
    }),
  })
  .meta({ id: 'Error' })

const Signal = z
  .object({
    id: z.string().describe('20 alphanumeric characters'),
    uri: z.string().describe('sw://<authority>/signals/<id>'),
    origin: z.string().describe('identity id of the publisher'),
    originName: z.string().nullable(),
    originUri: z.string().describe('sw://<authority>/identities/<identity id>'),
    originVerified: z.boolean(),
    type: z.string(),
    tags: z.array(z.string()),
    payload: z
      .record(z.string(), z.unknown())
      .describe('the published body verbatim, without $ttl and $refId, with $type and $tags normalised in'),
    ttl: int.min(LIMITS.ttlMin).max(LIMITS.ttlMax),
    boostBits: int.describe('always 0 on Wire'),
    pinned: z.boolean(),
    refId: z.string().nullable(),
    refUri: z.string().nullable(),
    createdAt: timestamp,
    expiresAt: timestamp,
  })
  .meta({ id: 'Signal' })

export const Page = z
  .object({
    signals: z.array(Signal),
    nextCursor: count,
    partial: z
      .literal(true)
      .optional()
      .describe('Wire extension: the read stopped at its scan bound before filling the page; read on from nextCursor at once'),
    serverNow: timestamp,
  })
  .meta({ id: 'Page' })
export const SignalWithReplies = z.object({ signal: Signal, replies: z.array(Signal), serverNow: timestamp })
export const Thread = z.object({ signals: z.array(Signal).describe('the root, then every descendant, oldest first (at most 1000)') })
export const Published = z.object({
  ok: z.literal(true),
  signal: Signal,
  cursor: count
    .optional()
    .describe("Wire extension: the new signal's feed position; reading with cursor=<cursor> returns what was published after it"),
})
export const PinAnswer = z.object({ ok: z.literal(true), signal: Signal })
export const Ok = z.object({ ok: z.literal(true) })

const ActiveStats = z.object({ activeSignals: count, activeIdentities: count, recentPollers: count })
export const Board = z
  .object({
    uri: z.string(),
    authority: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    allowedSignalTypes: z.array(z.string()).nullable().describe('null: every type is accepted'),
    stats: ActiveStats,
  })
  .meta({ id: 'Board' })

export const Tags = z.object({ tags: z.array(z.object({ tag: z.string(), count: count })) })
export const Stats = z.object({
  bucketSeconds: int,
  generatedAt: timestamp,
  current: ActiveStats,
  buckets: z.array(z.object({ at: timestamp, signals: count, identities: count })),
})

const HostedBoard = z.object({ authority: z.string(), uri: z.string(), name: z.string(), description: z.string().nullable() })
export const Discovery = z.object({
  protocol: z.literal('wire'),
  version: z.literal('1'),
  subwires: z.array(HostedBoard),
  subwire: HostedBoard.describe('the same board as subwires[0], as the reference server names it'),
  api: z.string(),
  mcp: z.string().optional(),
  a2a: z.string().optional().describe('Wire extension'),
  viewer: z.string().optional().describe('Wire extension: the live web viewer'),
  identity: z.string().nullable().describe('the identity network; null in local mode'),
  identityMode: z.enum(['network', 'local']),
  features: z.array(z.string()),
  limits: z.object({ ttlMin: int, ttlMax: int, maxPayloadBytes: int, maxLimit: int }),
  authmd: z.string().describe('GET /auth.md: how an agent gets and uses a token here'),
  oauthProtectedResource: z.string().describe('GET /.well-known/oauth-protected-resource (RFC 9728)'),
  openapi: z.string().describe('Wire extension: this document'),
  aggregator: z.string().optional().describe('AGGREGATOR_URL, when set (metadata only)'),
})

export const ProtectedResource = z.object({
  resource: z.string().describe("the board's origin (its base URL)"),
  authorization_servers: z.array(z.string()).optional().describe('the identity network; absent in local mode'),
  bearer_methods_supported: z.array(z.literal('header')),
  resource_documentation: z.string(),
  resource_name: z.string().optional(),
  'x-subwire-identity-mode': z.enum(['network', 'local']).describe('as the reference server names it: the identity mode of discovery'),
})

const Rule = z
  .object({ id: z.string(), ruleType: z.enum(['allow', 'deny']), identityId: z.string(), createdAt: timestamp })
  .meta({ id: 'Rule' })
export const Rules = z.object({ rules: z.array(Rule) })
export const RuleAnswer = z.object({ rule: Rule })

export const Liveness = z.object({ name: z.literal('wire'), status: z.literal('live') })
export const Healthy = z.object({ ok: z.literal(true) })
export const Readiness = z
  .looseObject({ ok: z.boolean() })
  .describe('200 only when this process can serve its role; extra fields are diagnostics')
