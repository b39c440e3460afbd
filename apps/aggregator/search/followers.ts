import pg from 'pg'
import { WireClient, type EmittedSignal, type FetchLike } from '../../../client/src/index.js'
import type { Logger } from '../../../libs/shared/log/index.js'
import type { RegisteredBoard, RegistryStore } from '../registry/store.js'
import type { IndexStore } from './index-store.js'

export interface FollowersOptions {
  /** A direct session for the follow lock: one aggregator process follows the boards at a time. */
  lockUrl: string
  lockKey: string
  /** How often the set of followed boards is brought in line with the registry (ms). */
  syncMs: number
  fetch: FetchLike
  /** Called after each indexed page that added signals (wakes waiting searches). */
  onIndexed: () => void
  /** False: this process never follows (tests of the registry alone). */
  enabled: boolean
}

/**
 * Follows every registered board with Wire's client, from the cursor stored beside the index, and
 * indexes each page in the same transaction that stores the cursor after it: a restart, here or at
 * a board, resumes where the index ends, so nothing acknowledged is skipped. Only the process
 * holding the follow lock follows; the others take over when it goes.
 */
export function boardFollowers(registry: RegistryStore, index: IndexStore, log: Logger, o: FollowersOptions) {
  const running = new Map<string, AbortController>()
  const stopping = new AbortController()
  let lock: pg.Client | null = null

  const followOne = async (board: RegisteredBoard, signal: AbortSignal) => {
    const flog = log.child({ board: board.authority })
    while (!signal.aborted) {
      const current = await registry.get(board.authority).catch(() => null)
      if (!current || current.status === 'dropped') return
      const client = new WireClient({ url: current.url, fetch: o.fetch })
      const batch: EmittedSignal[] = []
      let stored = current.feedCursor ?? 0
      try {
        const follower = client.follow({ limit: 100 }, {
          cursor: stored,
          signal,
          wait: 25,
          minIntervalMs: 200,
          dedupeWindow: 1000, // per board, and there may be AGGREGATOR_MAX_BOARDS of them; the index's unique key catches any repeat
          onCursor: async (c) => {
            if (batch.length === 0 && c === stored) return
            const added = await index.add(board.authority, batch.splice(0), c)
            stored = c
            if (added > 0) o.onIndexed()
          },
        })
        for await (const s of follower) batch.push(s)
      } catch (err) {
        if (signal.aborted) return
        flog.warn({ err: String(err) }, 'follow failed; resuming from the stored cursor')
        await new Promise((r) => setTimeout(r, 2000).unref())
      }
    }
  }

  const sync = async () => {
    if (!lock) return
    const boards = await registry.active()
    const wanted = new Set(boards.map((b) => b.authority))
    for (const [authority, ctl] of running) if (!wanted.has(authority)) (ctl.abort(), running.delete(authority))
    for (const b of boards) {
      if (running.has(b.authority)) continue
      const ctl = new AbortController()
      running.set(b.authority, ctl)
      void followOne(b, AbortSignal.any([ctl.signal, stopping.signal])).finally(() => {
        if (running.get(b.authority) === ctl) running.delete(b.authority)
      })
    }
  }

  const takeLock = async () => {
    if (lock) return
    const c = new pg.Client({ connectionString: o.lockUrl, application_name: 'wire-aggregator-follow' })
    c.on('error', () => {})
    try {
      await c.connect()
      const { rows } = await c.query<{ ok: boolean }>('select pg_try_advisory_lock(hashtext($1)) ok', [o.lockKey])
      if (!rows[0]?.ok) return void (await c.end().catch(() => {}))
      c.once('end', () => {
        // the lock went with the session: stop following until it is ours again
        lock = null
        for (const ctl of running.values()) ctl.abort()
        running.clear()
      })
      lock = c
      log.info('following the registered boards')
    } catch (err) {
      log.warn({ err: String(err) }, 'follow lock not taken')
      await c.end().catch(() => {})
    }
  }

  const tick = async () => {
    if (stopping.signal.aborted || !o.enabled) return
    await takeLock()
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
    async stop() {
      clearInterval(timer)
      stopping.abort()
      await ticking.catch(() => {})
      running.clear()
      await lock?.end().catch(() => {})
      lock = null
    },
  }
}
export type BoardFollowers = ReturnType<typeof boardFollowers>
