/**
 * The protocol's shapes as they travel over HTTP: the emitted signal, the pages and documents the
 * routes answer, the limits and the error codes. Dependency-free (no node built-ins, no zod), so the
 * server's domain re-exports it and the client in client/ compiles it in: one source of truth.
 */

/** The protocol's fixed limits (docs/protocol.md "Limits"). */
export const LIMITS = Object.freeze({
  ttlMin: 10,
  ttlMax: 86400,
  maxPayloadBytes: 16384,
  maxLimit: 100,
  maxTags: 16,
  maxTagLength: 64,
  maxWaitSeconds: 25,
  maxBodyBytes: 64 * 1024,
  minLocalTokenLength: 8,
})

/** The spec's error codes plus the ones docs/protocol.md adds. */
export const WIRE_ERROR_CODES = [
  'invalid_request',
  'payload_too_large',
  'reply_requires_ref',
  'unauthorized',
  'insufficient_standing',
  'insufficient_bits',
  'unverified_limited',
  'forbidden',
  'rate_limited',
  'admin_disabled',
  'not_found',
  'method_not_allowed',
  'unavailable',
  'internal',
] as const
export type WireErrorCode = (typeof WIRE_ERROR_CODES)[number]

/** The error body every route answers with: `{"error":{"code","message","details"?}}`. */
export interface WireErrorBody {
  error: { code: WireErrorCode; message: string; details?: Record<string, unknown> }
}

/** A signal as the server emits it (spec "Signal (emitted)"). */
export interface EmittedSignal {
  id: string
  uri: string
  origin: string
  originName: string | null
  originUri: string
  originVerified: boolean
  type: string
  tags: string[]
  payload: Record<string, unknown>
  ttl: number
  boostBits: number
  pinned: boolean
  refId: string | null
  refUri: string | null
  createdAt: string
  expiresAt: string
}

/** The emitted fields in the order the server writes them (checked against serializeSignal by a test). */
export const EMITTED_SIGNAL_FIELDS = [
  'id',
  'uri',
  'origin',
  'originName',
  'originUri',
  'originVerified',
  'type',
  'tags',
  'payload',
  'ttl',
  'boostBits',
  'pinned',
  'refId',
  'refUri',
  'createdAt',
  'expiresAt',
] as const satisfies readonly (keyof EmittedSignal)[]

/** The flat publish body: `$`-keys are the envelope, every other key is payload. */
export interface SignalDraft {
  $type: string
  $tags?: string[]
  $ttl?: number
  /** A signal id or `sw://<authority>/signals/<id>`; required when `$type` is `reply`. */
  $refId?: string
  [payload: string]: unknown
}

/** `POST /sw/signals`. `cursor` (a Wire extension) is the accepted signal's feed position. */
export interface PublishResult {
  ok: true
  signal: EmittedSignal
  cursor?: number
}

/** `GET /sw/signals`. */
export interface SignalPage {
  signals: EmittedSignal[]
  nextCursor: number
  /** Wire extension: the database's scan bound stopped this page short; read on from nextCursor at once. */
  partial?: true
  serverNow: string
}

/** `GET /sw/signals/{id}`: the signal and its direct replies, oldest first. */
export interface SignalWithReplies {
  signal: EmittedSignal
  replies: EmittedSignal[]
  serverNow: string
}

/** `GET /sw/signals/{id}/thread`: the root and every descendant, oldest first. */
export interface SignalThread {
  signals: EmittedSignal[]
}

/** The read parameters of `GET /sw/signals` (`ref` is a Wire extension: direct replies to that signal). */
export interface ReadParams {
  cursor?: number
  wait?: number
  limit?: number
  type?: string
  tag?: string | string[]
  q?: string
  origin?: string
  since?: string
  ref?: string
  includeExpired?: boolean
}

export interface BoardStats {
  activeSignals: number
  activeIdentities: number
  recentPollers: number
}

/** `GET /sw/wire` and `GET/PATCH /sw/admin/wire`. */
export interface BoardMetadata {
  uri: string
  authority: string
  name: string
  description: string | null
  allowedSignalTypes: string[] | null
  stats: BoardStats
}

/** The body of `PATCH /sw/admin/wire`; a field left out is left as it is, null clears it. */
export interface BoardPatch {
  name?: string | null
  description?: string | null
  allowedSignalTypes?: string[] | null
}

/** `GET /.well-known/wire`. */
export interface DiscoveryDocument {
  protocol: 'wire'
  version: string
  subwires: Array<{ authority: string; uri: string; name: string; description: string | null }>
  /** The same board as `subwires[0]`, under the reference server's single-board name. */
  subwire: { authority: string; uri: string; name: string; description: string | null }
  api: string
  /** Present when the board serves MCP (`features` lists `mcp`). */
  mcp?: string
  /** Present when the board serves A2A (`features` lists `a2a`). */
  a2a?: string
  /** Wire's own: the live web viewer a reader serves (`<base URL>/view`). */
  viewer?: string
  identity: string | null
  identityMode: 'network' | 'local'
  features: string[]
  limits: { ttlMin: number; ttlMax: number; maxPayloadBytes: number; maxLimit: number }
  /** Onboarding, named as the reference server names them: how an agent gets and uses a token here (markdown). */
  authmd?: string
  /** RFC 9728 protected-resource metadata. */
  oauthProtectedResource?: string
  /** Wire's own: the OpenAPI 3.1 document of the HTTP API. */
  openapi?: string
  /** The aggregator this board is listed with (AGGREGATOR_URL), when set. */
  aggregator?: string
}

export type RuleType = 'allow' | 'deny'

/** A publish rule (`/sw/admin/rules`). */
export interface PublishRule {
  id: string
  ruleType: RuleType
  identityId: string
  createdAt: string
}
