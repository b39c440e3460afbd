import type { Identity, IdentityResolver } from '../auth/index.js'
import type { Caller } from '../caller.js'
import { DatabaseUnavailable, type IdempotencyKeys, type SignalReader } from '../db/index.js'
import {
  invalid,
  parseEnvelope,
  parseIdempotencyKey,
  parseSignalRef,
  serializeSignal,
  WireError,
  newSignalId,
  type Envelope,
  type Signal,
} from '../domain/index.js'
import type { ClientLimits, PublishRateLimits } from '../limits/index.js'
import { startSpan, tracing } from '../tracing/index.js'
import { nothingStored, type Batcher } from './batcher.js'
import type { BoardPolicy } from './board-policy.js'
import { publishOnce, replayOf, type FindKey } from './idempotency.js'
import type { NewIdentityGate } from './new-identities.js'

export interface PublishDeps {
  authority: string
  defaultTtl: number
  unverifiedThreadsPerDay: number
  threadBitFloor: number | null // network mode only
  identity: IdentityResolver
  signals: SignalReader // on the primary: the referenced signal must exist now
  policy: BoardPolicy
  rateLimits: PublishRateLimits
  /** Per client address, across every writer: attempts at the door, publishes before the insert. */
  addressLimits: Pick<ClientLimits, 'attempt' | 'publish'>
  newIdentities: NewIdentityGate
  keys: IdempotencyKeys
  /** The lookup of a publish's key right after auth, grouped with those of concurrent publishes (groupedFind). */
  findKey: FindKey
  batcher: Batcher
}

/**
 * The one publish path, used by HTTP, MCP and A2A alike: the door to publishing. Checks run in the order of docs/protocol.md ("Publish check order"):
 * (body size: HTTP layer) → the address's attempt budget → auth → envelope → board rules → standing → rate limit → insert.
 * The attempt budget is spent before any other work, so a refused, invalid or replayed publish costs its sender too.
 * A retry with an Idempotency-Key already used answers the original signal right after auth.
 * Resolves once the signal is committed.
 */
export async function publishSignal(d: PublishDeps, r: Caller, body: string | undefined): Promise<Signal> {
  // a budget that is off or served from its lease, and board rules still fresh, answer with no
  // promise: every publish passes five such checks, and only what must wait is awaited
  const attempt = d.addressLimits.attempt(r.address)
  if (attempt) await attempt
  const span = tracing.on ? startSpan('wire.publish', typeof r.traceparent === 'string' ? r.traceparent : '') : undefined
  try {
    const signal = await publish(d, r, body)
    span?.set('wire.signal.seq', signal.seq)
    return signal
  } catch (err) {
    // the database failed before the signal's insert (a lookup, a reservation): nothing was stored
    const e = err instanceof DatabaseUnavailable ? nothingStored(err) : err
    span?.fail(e instanceof WireError ? e.code : 'internal')
    throw e
  } finally {
    span?.end()
  }
}

async function publish(d: PublishDeps, r: Caller, body: string | undefined): Promise<Signal> {
  const who = await d.identity.authenticate(r.authorization)
  const key = parseIdempotencyKey(r.idempotencyKey)
  if (key !== null) {
    const original = await replayOf(d.keys, d.findKey, who.id, key)
    if (original) return original
  }
  if (body === undefined || body.trim() === '') throw invalid('signal missing: send one JSON object')
  const env = parseEnvelope(body, d.defaultTtl)
  let refId: string | null = null
  if (env.ref !== null) {
    refId = parseSignalRef(env.ref, d.authority)
    if (!(await d.signals.exists(refId))) throw invalid('$refId names no signal on this board', { refId })
  }
  const rules = d.policy.check(who.id, env.type)
  if (rules) await rules
  if (refId === null && d.threadBitFloor !== null && (who.bits ?? 0) < d.threadBitFloor)
    throw new WireError('insufficient_standing', 'opening a thread needs more standing', {
      required: d.threadBitFloor,
      bits: who.bits ?? 0,
    })
  const p: Publish = { d, r, who, env, refId, limitedThread: refId === null && !who.verified }
  // with no key `insert` always stores: its signal is never null
  const once = async (id: string) => (await (p.limitedThread ? oneAtATime(d, who.id, () => insert(p, id, null)) : insert(p, id, null)))!
  if (key === null) return once(newSignalId())
  if (p.limitedThread) return publishOnce(d.keys, who.id, key, once)
  // a new key is stored with its signal in the batch's statement; one already held (a retry racing its
  // original, a dead or unfinished reservation) stores nothing there and is settled through the
  // reservation, where a publish still owed is committed without being charged again
  const stored = await insert(p, newSignalId(), key)
  return stored ?? publishOnce(d.keys, who.id, key, async (id) => (await commit(d, who, env, refId, id, false, null))!)
}

/** A publish that passed its checks, up to its insert. */
interface Publish {
  d: PublishDeps
  r: Caller
  who: Identity
  env: Envelope
  refId: string | null
  /** An unverified identity's thread: counted against its daily allowance, atomically across writers. */
  limitedThread: boolean
}

/** Charges the publish's budgets and commits it; null when its key (`key`) was already held and nothing was stored. */
async function insert({ d, r, who, env, refId, limitedThread }: Publish, id: string, key: string | null): Promise<Signal | null> {
  // the thread count is looked at before the rate limit is charged (docs/protocol.md's check order); the
  // count that decides is taken again with the insert, atomically across writers
  if (limitedThread && (await d.signals.threadsInLastDay(who.id)) >= d.unverifiedThreadsPerDay) throw threadLimit(d)
  const address = d.addressLimits.publish(r.address)
  if (address) await address
  const known = d.newIdentities.check(who.id)
  if (known) await known
  const rate = d.rateLimits.consume(who.id, who.verified)
  if (rate) await rate
  const signal = await commit(d, who, env, refId, id, limitedThread, key)
  if (signal) d.newIdentities.published(who.id)
  return signal
}

const queues = new WeakMap<PublishDeps, Map<string, Promise<unknown>>>()

/**
 * Runs `fn` after every earlier call for the same key has settled: in this process an unverified
 * identity's thread openings run one at a time, so a burst is told unverified_limited before any
 * of it is charged to the rate limit.
 */
function oneAtATime<T>(d: PublishDeps, key: string, fn: () => Promise<T>): Promise<T> {
  const byKey = queues.get(d) ?? new Map<string, Promise<unknown>>()
  queues.set(d, byKey)
  const run = (byKey.get(key) ?? Promise.resolve()).then(fn)
  const settled = run.catch(() => {})
  byKey.set(key, settled)
  void settled.then(() => byKey.get(key) === settled && byKey.delete(key))
  return run
}

const threadLimit = (d: PublishDeps) =>
  new WireError('unverified_limited', `unverified identities may open ${d.unverifiedThreadsPerDay} thread(s) per 24 h`, {
    limit: d.unverifiedThreadsPerDay,
  })

function commit(
  d: PublishDeps,
  who: Identity,
  env: Envelope,
  refId: string | null,
  id: string,
  limitedThread: boolean,
  key: string | null,
): Promise<Signal | null> {
  const createdAtMs = Date.now()
  const signal = {
    id,
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
  }
  // an unverified identity's thread is counted and inserted atomically across every writer
  if (limitedThread) return d.batcher.submitLimitedThread(signal, d.unverifiedThreadsPerDay)
  return key === null ? d.batcher.submit(signal) : d.batcher.submitKeyed(signal, key)
}

/** A publish's answer on every surface (HTTP, MCP, A2A): `{ok, signal, cursor}`, the cursor being the signal's seq. */
export function publishAnswer(signal: Signal, authority: string): string {
  return `{"ok":true,"signal":${serializeSignal(signal, authority)},"cursor":${signal.seq}}`
}
