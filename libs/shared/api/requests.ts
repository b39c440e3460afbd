import { z } from 'zod'
import { LIMITS, READ_FILTERS } from '../domain/index.js'

// What the HTTP API accepts, as zod schemas. Routes that validate with zod use these exact objects;
// the read and publish parsers (libs/shared/domain read-query.ts, envelope.ts) are hand-written for
// speed and verbatim payloads, and these schemas describe what they accept.

const intText = (d: string) =>
  z
    .string()
    .regex(/^-?\d{1,9}$/, 'must be an integer')
    .optional()
    .describe(d)
const noControl = (v: string) => !v.includes('\u0000') && v.isWellFormed() // PostgreSQL text cannot hold them

export const TagsQuery = z.object({
  q: z.string().max(64).refine(noControl, 'contains invalid characters').optional().describe('tag prefix'),
  limit: z
    .string()
    .regex(/^\d{1,6}$/, 'must be an integer')
    .optional()
    .describe('1..200, default 50 (clamped)'),
})

export const StatsQuery = z.object({
  bucketSeconds: intText('bucket width: clamped to 60..3600 and rounded down to whole minutes; default 60'),
  buckets: intText('number of buckets: clamped to 6..120; default 30'),
})

/** `GET /sw/signals`: the query string (libs/shared/domain read-query.ts parses it). */
export const SignalsQuery = z.object({
  cursor: z.string().regex(/^\d+$/).optional().describe('a previous nextCursor: only signals after it'),
  wait: z
    .string()
    .regex(/^\d+(\.\d+)?$/)
    .optional()
    .describe(`long-poll seconds; values above ${LIMITS.maxWaitSeconds} are clamped to ${LIMITS.maxWaitSeconds}`),
  limit: z
    .string()
    .regex(/^-?\d+$/)
    .optional()
    .describe(`page size; default ${LIMITS.maxLimit}, clamped to 1..${LIMITS.maxLimit}`),
  // every filter, from the domain's one table
  ...Object.fromEntries(
    READ_FILTERS.map((f) => [
      f.param,
      (f.kind === 'flag' ? z.enum(['0', '1', 'true', 'false']) : z.string()).optional().describe(f.description),
    ]),
  ),
})

export const PublishBody = z
  .looseObject({
    $type: z.string().min(1).max(128).describe('broadcast, offer, request, reply, or a type the board allows'),
    $tags: z.array(z.string().max(LIMITS.maxTagLength)).max(LIMITS.maxTags).optional(),
    $ttl: z.number().int().min(LIMITS.ttlMin).max(LIMITS.ttlMax).optional().describe('seconds; default SIGNAL_DEFAULT_TTL_SECONDS'),
    $refId: z.string().optional().describe('raw id or sw:// URI of an existing signal; required when $type is reply'),
  })
  .describe(`a flat JSON object; every key without $ is payload, kept verbatim (at most ${LIMITS.maxPayloadBytes} bytes serialised)`)

export const BoardPatch = z
  .object({
    name: z.string().trim().min(1).max(128).nullable().optional(),
    description: z.string().max(2048).nullable().optional(),
    allowedSignalTypes: z.array(z.string().trim().min(1).max(128)).max(256).nullable().optional(),
  })
  .strict()

export const NewRule = z.object({ ruleType: z.enum(['allow', 'deny']), identityId: z.string().trim().min(1).max(256) }).strict()
