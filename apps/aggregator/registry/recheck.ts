import { request, type Dispatcher } from 'undici'
import type { Logger } from '../../../libs/shared/log/index.js'
import type { IndexStore } from '../search/index-store.js'
import type { Registry } from './registry.js'
import type { RegistryStore } from './store.js'

/** Indexed signals of a board asked for by id per check: removals show within a few checks. */
const REMOVAL_CHECKS_PER_BOARD = 50
/** Bytes of a by-id answer read before its socket is closed (the status is all a check needs). */
const REMOVAL_ANSWER_BYTES = 64 * 1024

/**
 * One pass over the registry (pg-boss runs it once per AGGREGATOR_RECHECK_SECONDS, whichever
 * process takes the slot): every board's discovery again (up, down, dropped), signals the board no
 * longer serves by id taken out of the index, expired signals purged.
 */
export interface RecheckDeps {
  registry: Registry
  store: RegistryStore
  index: IndexStore
  dispatcher: Dispatcher
  timeoutMs: number
  /** Each board's share of the index: a board under 90 % of it again is followed again. */
  quota: { rows: number; bytes: number }
  /** A dropped board is forgotten (deleted from the registry) this long after it was dropped. */
  forgetDroppedSeconds: number
  log: Logger
  /** Told when a board's status changed (this process's proxy forgets what it cached; other processes' caches expire within seconds). */
  changed?: (authority: string) => void
}

export async function recheckBoards(deps: RecheckDeps, signal: AbortSignal) {
  const boards = await deps.store.active()
  const counts = { up: 0, down: 0, dropped: 0, removed: 0, expired: 0, forgotten: 0 }
  const queue = [...boards]
  const worker = async () => {
    for (let b = queue.shift(); b && !signal.aborted; b = queue.shift()) {
      const state = await deps.registry.recheck(b)
      counts[state]++
      if (state !== b.status) deps.changed?.(b.authority)
      if (state === 'up') counts.removed += await removeGone(deps, b.authority, b.url, signal).catch(() => 0)
    }
  }
  await Promise.all(Array.from({ length: Math.min(8, boards.length) }, worker))
  counts.expired = await deps.index.purgeExpired(deps.quota)
  counts.forgotten = await deps.store.forgetDropped(deps.forgetDroppedSeconds)
  deps.log.info(counts, 'boards rechecked')
  return counts
}

async function removeGone(
  deps: { index: IndexStore; dispatcher: Dispatcher; timeoutMs: number },
  board: string,
  url: string,
  signal: AbortSignal,
): Promise<number> {
  const ids = await deps.index.oldestChecked(board, REMOVAL_CHECKS_PER_BOARD)
  const gone: string[] = []
  const kept: string[] = []
  // one deadline for the board's whole check: a board that trickles its answers holds one worker that long, not 50 times
  const left = AbortSignal.any([signal, AbortSignal.timeout(deps.timeoutMs * 2)])
  for (const id of ids) {
    if (left.aborted) break
    const res = await request(`${url}/sw/signals/${encodeURIComponent(id)}`, {
      dispatcher: deps.dispatcher,
      headers: { 'accept-encoding': 'identity' },
      signal: AbortSignal.any([left, AbortSignal.timeout(deps.timeoutMs)]),
    })
    // only the status matters: at most REMOVAL_ANSWER_BYTES of the body are read, then the socket is closed
    await res.body.dump({ limit: REMOVAL_ANSWER_BYTES, signal: left }).catch(() => {})
    if (res.statusCode === 404) gone.push(id)
    else if (res.statusCode === 200) kept.push(id)
  }
  await deps.index.touch(board, kept)
  return deps.index.remove(board, gone)
}
