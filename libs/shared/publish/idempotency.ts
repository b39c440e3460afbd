import { setTimeout as sleep } from 'node:timers/promises'
import { REMOVED, type IdempotencyKeys, type Reservation } from '../db/index.js'
import { newSignalId, WireError, type Signal } from '../domain/index.js'

/** A reservation whose signal is still missing after this long belongs to a publish that stored nothing. */
const STALE_MS = 30_000
/** How long a retry waits for a concurrent publish of the same key before answering 503. */
const WAIT_MS = 10_000
const POLL_MS = 50

/** Whether a failed publish may still have stored its signal (then its key must keep pointing at it). */
const mayHaveStored = (err: unknown) => err instanceof WireError && err.code === 'unavailable' && err.details?.outcome === 'unknown'

/**
 * Publishes at most once per (identity, key) across every writer: the key is reserved in the
 * database for the id the signal will get before it is stored, so a retry (here or on another
 * writer) finds the reservation and answers the original signal, waiting for it if it is still
 * committing. A publish that surely stored nothing frees its key.
 */
export async function publishOnce(
  keys: IdempotencyKeys,
  identity: string,
  key: string,
  publish: (signalId: string) => Promise<Signal>,
): Promise<Signal> {
  const deadline = Date.now() + WAIT_MS
  for (;;) {
    const held = await keys.find(identity, key)
    if (held) {
      const original = await keys.signal(held.signalId)
      if (original) return answerOf(original, held.signalId)
      if (held.ageMs > STALE_MS) {
        const id = newSignalId()
        if (await keys.takeOver(identity, key, held.signalId, id)) return run(keys, identity, key, id, publish)
      }
    } else {
      const id = newSignalId()
      if (await keys.reserve(identity, key, id)) return run(keys, identity, key, id, publish)
    }
    // another publish of this key is committing (here or on another writer): wait for its outcome
    if (Date.now() > deadline)
      throw new WireError('unavailable', 'a publish with this Idempotency-Key is still in progress; retry shortly', undefined, {
        retryAfter: 1,
      })
    await sleep(POLL_MS)
  }
}

/** Looks up an (identity, key) pair: its live reservation, or null. */
export type FindKey = (identity: string, key: string) => Promise<Reservation | null>

/** Most pairs looked up in one statement. */
const LOOKUPS_MAX = 500

/**
 * The lookup a keyed publish makes right after auth, grouped as the group commit groups inserts:
 * the lookups that arrive while one statement is out go together in the next, so concurrent keyed
 * publishes cost the primary one statement, not one each. What waits is bounded by the publishes in
 * flight (each waits for its own answer).
 */
export function groupedFind(keys: IdempotencyKeys): FindKey {
  let queue: Array<{ pair: [string, string]; resolve: (r: Reservation | null) => void; reject: (e: unknown) => void }> = []
  let running = false
  async function drain() {
    while (queue.length) {
      const batch = queue.slice(0, LOOKUPS_MAX)
      queue = queue.slice(batch.length)
      try {
        const found = await keys.findMany(batch.map((w) => w.pair))
        batch.forEach((w, i) => void w.resolve(found[i] ?? null))
      } catch (err) {
        for (const w of batch) w.reject(err)
      }
    }
    running = false
  }
  return (identity, key) =>
    new Promise((resolve, reject) => {
      queue.push({ pair: [identity, key], resolve, reject })
      if (!running) {
        running = true
        // setImmediate gathers every lookup of this turn of the event loop
        setImmediate(() => void drain())
      }
    })
}

/** Returns the original signal for a key already used, without publishing; null when the key is free. */
export async function replayOf(keys: IdempotencyKeys, find: FindKey, identity: string, key: string): Promise<Signal | null> {
  const held = await find(identity, key)
  const original = held && (await keys.signal(held.signalId))
  return original ? answerOf(original, held.signalId) : null
}

/** A replay answers the original signal, or not_found when a moderator removed it (never the removed signal, never a new one). */
function answerOf(original: Signal | typeof REMOVED, id: string): Signal {
  if (original === REMOVED)
    throw new WireError('not_found', 'the signal published with this Idempotency-Key was removed by a moderator', { id })
  return original
}

async function run(keys: IdempotencyKeys, identity: string, key: string, id: string, publish: (signalId: string) => Promise<Signal>) {
  try {
    return await publish(id)
  } catch (err) {
    if (!mayHaveStored(err)) await keys.release(identity, key, id).catch(() => {})
    throw err
  }
}
