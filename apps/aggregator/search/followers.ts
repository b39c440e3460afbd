import { retryDelay, WireClient, WireError, type FetchLike } from '../../../client/src/index.js'
import { LIMITS } from '../../../libs/shared/domain/index.js'
import type { Logger } from '../../../libs/shared/log/index.js'
import { refusedSignals } from '../metrics.js'
import type { RegisteredBoard, RegistryStore } from '../registry/store.js'
import { followLag, type FollowTrack } from './follow-lag.js'
import { followLock, type FollowLockOptions } from './follow-lock.js'
import type { IndexQuota, IndexStore } from './index-store.js'
import { pageBudget } from './page-budget.js'
import { ScannedPage } from './page-scan.js'
import { validated, type Rejection } from './validate.js'

export interface FollowersOptions extends FollowLockOptions {
  /** How often the set of followed boards is brought in line with the registry (ms). */
  syncMs: number
  fetch: FetchLike
  /** Called after each indexed page that added signals (wakes waiting searches). */
  onIndexed: () => void
  /** False: this process never follows (tests of the registry alone). */
  enabled: boolean
  /** Each board's share of the index. */
  quota: IndexQuota
  /** Most decoded bytes of one page (the page's limit is chosen to fit). */
  pageMaxBytes: number
  /** Pages read from one board per minute, at most. */
  pagesPerMinute: number
  /** Decoded bytes of followed pages held at once, every board together (page-budget.ts). */
  followMaxBytes: number
  /** A followed page's body must arrive this long after its headers (ms). */
  pageBodyTimeoutMs: number
  /** A board whose follower has completed no page read for this long is stalled (ms; follow-lag.ts). */
  stalledMs: number
  /** How long each read waits at the board for a new signal (seconds; 25, the protocol's most, but in tests). */
  waitSeconds?: number
}

/** Signals per followed page: as many of the largest the protocol allows (and their envelopes) as fit in the page's bytes. */
const pageLimit = (pageMaxBytes: number) =>
  Math.max(1, Math.min(LIMITS.maxLimit, Math.floor(pageMaxBytes / (LIMITS.maxPayloadBytes + 8192))))

const pause = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (ms <= 0 || signal.aborted) return resolve()
    const done = () => (clearTimeout(t), signal.removeEventListener('abort', done), resolve())
    const t = setTimeout(done, ms)
    signal.addEventListener('abort', done, { once: true })
  })

/**
 * Follows every registered board with Wire's client, from the cursor stored beside the index, and
 * indexes each page in the same transaction that stores the cursor after it: a restart, here or at
 * a board, resumes where the index ends, so nothing acknowledged is skipped. Only the process
 * holding the follow lock follows; the others take over when it goes.
 */
export function boardFollowers(registry: RegistryStore, index: IndexStore, log: Logger, o: FollowersOptions) {
  const running = new Map<string, AbortController>()
  const stopping = new AbortController()
  const lag = followLag({ stalledMs: o.stalledMs })
  const lock = followLock(o, log, () => {
    for (const ctl of running.values()) ctl.abort()
    running.clear()
    lag.retain(new Set())
  })
  // a board stalls while its follower waits on it: checked on a timer, and at each scrape
  const lagCheck = setInterval(lag.check, Math.min(5000, Math.max(100, o.stalledMs / 4)))
  lagCheck.unref()
  const wait = o.waitSeconds ?? 25

  const limit = pageLimit(o.pageMaxBytes)
  const budget = pageBudget({ maxBytes: o.followMaxBytes, bodyTimeoutMs: o.pageBodyTimeoutMs })
  const gapMs = 60_000 / o.pagesPerMinute
  const followOne = async (board: RegisteredBoard, signal: AbortSignal, track: FollowTrack) => {
    const flog = log.child({ board: board.authority })
    // the board's pages count against the process's budget from their first byte until indexed
    const counted = budget.forBoard(o.fetch)
    let failures = 0
    while (!signal.aborted) {
      const current = await registry.get(board.authority).catch(() => null)
      if (!current || current.status === 'dropped' || current.overQuotaAt) return
      // a stranger's answers: each page read as a stream and cut at pageMaxBytes, counted after decoding,
      // and kept as its bytes: its signals are parsed one at a time as they are indexed (page-scan.ts)
      const client = new WireClient({
        url: current.url,
        fetch: counted.fetch,
        maxBytes: o.pageMaxBytes,
        parsePage: (b) => new ScannedPage(b),
        timeoutMs: 15_000, // a long-poll's wait on top
      })
      let cursor = current.feedCursor ?? 0
      try {
        // the board's pages, each indexed with the cursor after it, until the board goes or turns over quota
        for (let lastPage = 0; !signal.aborted; ) {
          const started = Date.now()
          const page = await client.read({ cursor, limit, wait }, { signal })
          if (!(page instanceof ScannedPage) || !Number.isSafeInteger(page.nextCursor))
            throw new WireError('internal', 200, 'a page without nextCursor')
          failures = 0
          if (page.count === 0 && page.nextCursor === cursor) {
            counted.release()
            track.read('empty')
            await pause(200 - (Date.now() - started), signal) // a board that answers an empty wait at once is not hammered
            continue
          }
          const refused: Partial<Record<Rejection, number>> = {}
          const valid = validated(page.each(), board.authority, refused)
          const { added, cut } = await index
            .add(board.authority, valid, page.nextCursor, o.quota)
            .finally(() => (page.release(), counted.release()))
          cursor = page.nextCursor
          track.read('page')
          for (const [reason, n] of Object.entries(refused)) refusedSignals.inc({ reason }, n)
          if (Object.keys(refused).length) flog.warn({ refused }, 'signals not indexed: they break the protocol')
          if (added > 0) o.onIndexed()
          if (cut)
            return flog.warn(
              { rows: o.quota.rows, bytes: o.quota.bytes },
              'board over its index quota: no longer followed until its signals expire',
            )
          // the board's page rate: a board that answers full pages at once is read at most pagesPerMinute
          const next = lastPage + gapMs
          lastPage = Math.max(Date.now(), next)
          await pause(next - Date.now(), signal)
        }
      } catch (err) {
        if (signal.aborted) return
        track.failed()
        if (err instanceof WireError && err.code === 'payload_too_large') {
          flog.warn(
            { maxBytes: o.pageMaxBytes },
            'board answered a page larger than AGGREGATOR_PAGE_MAX_BYTES: no longer followed until a recheck',
          )
          await index.markOverQuota(board.authority, 'page_too_large').catch(() => {})
          return
        }
        // a refusal, an outage or a page budget's drop: the client's backoff (Retry-After when told), else 2 s
        const delayMs = err instanceof WireError && err.retryable ? retryDelay(err, failures++) : 2000
        if (delayMs === 2000) flog.warn({ err: String(err) }, 'follow failed; resuming from the stored cursor')
        await pause(delayMs, signal)
      } finally {
        counted.release()
      }
    }
  }

  const sync = async () => {
    if (!lock.held) return
    const boards = await registry.active()
    const wanted = new Set(boards.filter((b) => !b.overQuotaAt).map((b) => b.authority))
    for (const [authority, ctl] of running) if (!wanted.has(authority)) ctl.abort(), running.delete(authority)
    lag.retain(wanted)
    for (const b of boards) {
      if (running.has(b.authority) || !wanted.has(b.authority)) continue
      const ctl = new AbortController()
      running.set(b.authority, ctl)
      const track = lag.track(b.authority, log.child({ board: b.authority }))
      void followOne(b, AbortSignal.any([ctl.signal, stopping.signal]), track).finally(() => {
        if (running.get(b.authority) === ctl) running.delete(b.authority)
      })
    }
    for (const b of boards) lag.status(b.authority, b.status) // a board marked down is the registry's to show
  }

  const tick = async () => {
    if (stopping.signal.aborted || !o.enabled) return
    await lock.take()
    await sync().catch((err: unknown) => log.warn({ err: String(err) }, 'follower sync failed'))
  }
  let ticking: Promise<void> = tick()
  const timer = setInterval(() => (ticking = ticking.then(tick)), o.syncMs)
  return {
    /** Brings the followers in line with the registry now (after a registration or removal). */
    sync: () => (ticking = ticking.then(tick)),
    get following() {
      return [...running.keys()]
    },
    /** How far behind its boards the follow is (wire_aggregator_follow_lag_seconds, wire_aggregator_boards_stalled). */
    lag,
    /** Decoded bytes of followed pages held now (AGGREGATOR_FOLLOW_MAX_BYTES bounds it). */
    get bytesHeld() {
      return budget.held
    },
    async stop() {
      clearInterval(timer)
      clearInterval(lagCheck)
      stopping.abort()
      await ticking.catch(() => {})
      running.clear()
      lag.retain(new Set())
      await lock.release()
    },
  }
}
export type BoardFollowers = ReturnType<typeof boardFollowers>
