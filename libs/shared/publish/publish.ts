import type { Identity, IdentityResolver } from '../auth/index.js'
import type { SignalReader } from '../db/index.js'
import { invalid, parseEnvelope, parseSignalRef, WireError, newSignalId, type Envelope, type Signal } from '../domain/index.js'
import type { Batcher } from './batcher.js'
import type { BoardPolicy } from './board-policy.js'
import type { PublishRateLimits } from './rate-limit.js'

export interface PublishDeps {
  authority: string
  defaultTtl: number
  unverifiedThreadsPerDay: number
  threadBitFloor: number | null // network mode only
  identity: IdentityResolver
  signals: SignalReader // on the primary: the referenced signal must exist now
  policy: BoardPolicy
  rateLimits: PublishRateLimits
  batcher: Batcher
}

/**
 * The one publish path, used by HTTP, MCP and A2A alike. Checks run in decisions.md's order:
 * (body size: HTTP layer) → auth → envelope → board rules → standing → rate limit → insert.
 * Resolves once the signal is committed.
 */
export async function publishSignal(d: PublishDeps, authorization: string | string[] | undefined, body: string | undefined): Promise<Signal> {
  const who = await d.identity.authenticate(authorization)
  if (body === undefined || body.trim() === '') throw invalid('signal missing: send one JSON object')
  const env = parseEnvelope(body, d.defaultTtl)
  let refId: string | null = null
  if (env.ref !== null) {
    refId = parseSignalRef(env.ref, d.authority)
    if (!(await d.signals.exists(refId))) throw invalid('$refId names no signal on this board', { refId })
  }
  await d.policy.check(who.id, env.type)
  if (refId === null && d.threadBitFloor !== null && (who.bits ?? 0) < d.threadBitFloor)
    throw new WireError('insufficient_standing', 'opening a thread needs more standing', { required: d.threadBitFloor, bits: who.bits ?? 0 })
  const insert = async () => {
    if (refId === null && !who.verified && (await d.signals.threadsInLastDay(who.id)) >= d.unverifiedThreadsPerDay)
      throw new WireError('unverified_limited', `unverified identities may open ${d.unverifiedThreadsPerDay} thread(s) per 24 h`, {
        limit: d.unverifiedThreadsPerDay,
      })
    await d.rateLimits.consume(who.id, who.verified)
    return commit(d, who, env, refId)
  }
  // @NOTE the daily thread count is read, then the thread inserted: an unverified identity's thread
  // openings run one at a time (in this process) so a burst cannot all pass the same count
  return refId === null && !who.verified ? oneAtATime(d, who.id, insert) : insert()
}

const queues = new WeakMap<PublishDeps, Map<string, Promise<unknown>>>()

/** Runs `fn` after every earlier call for the same key has settled. */
function oneAtATime<T>(d: PublishDeps, key: string, fn: () => Promise<T>): Promise<T> {
  const byKey = queues.get(d) ?? new Map<string, Promise<unknown>>()
  queues.set(d, byKey)
  const run = (byKey.get(key) ?? Promise.resolve()).then(fn)
  const settled = run.catch(() => {})
  byKey.set(key, settled)
  void settled.then(() => byKey.get(key) === settled && byKey.delete(key))
  return run
}

function commit(d: PublishDeps, who: Identity, env: Envelope, refId: string | null): Promise<Signal> {
  const createdAtMs = Date.now()
  return d.batcher.submit({
    id: newSignalId(),
    origin: who.id,
    originName: who.name,
    originUri: who.uri,
    originVerified: who.verified,
    type: env.type,
    tags: env.tags,
    payloadText: env.payloadText,
    ttl: env.ttl,
    refId,
    createdAtMs,
    expiresAtMs: createdAtMs + env.ttl * 1000,
  })
}
