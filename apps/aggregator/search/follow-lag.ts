import type { Logger } from '../../../libs/shared/log/index.js'
import { followReads } from '../metrics.js'
import type { BoardStatus } from '../registry/store.js'

export interface FollowLagOptions {
  /** A followed board whose follower has completed no page read for this long is stalled (ms). */
  stalledMs: number
}

interface Followed {
  /** When its follower last completed a page read (a page, or an empty long-poll answer); at first, when its follow started. */
  since: number
  /** Marked down by its checks: the registry shows it, so it is neither counted nor logged here. */
  down: boolean
  /** Logged as stalled, and not yet as recovered. */
  stalled: boolean
  log: Logger
}

/**
 * How far behind each followed board its follower is: the time since it last completed a page
 * read. A board that stalls (its link passes no bytes, or it answers errors or nothing at all)
 * shows here long before its checks mark it down. What leaves the process is bounded whatever the
 * number of boards: the worst lag, the number of boards stalled, and one warning when a board
 * stalls and one line when it recovers (by authority), however many reads fail in between.
 */
export function followLag(o: FollowLagOptions) {
  const now = Date.now
  const boards = new Map<string, Followed>()
  const late = (b: Followed, at: number) => !b.down && at - b.since >= o.stalledMs

  /** Marks, and logs once, the boards that have stalled since the last check. */
  const check = () => {
    const at = now()
    for (const b of boards.values())
      if (!b.stalled && late(b, at)) {
        b.stalled = true
        b.log.warn(
          { sinceSeconds: Math.round((at - b.since) / 1000), stalledSeconds: o.stalledMs / 1000 },
          'follow stalled: no page read from the board for AGGREGATOR_FOLLOW_STALLED_SECONDS; search falls behind for it',
        )
      }
  }

  return {
    /**
     * One board's follow: its reads. A follower that starts again (after a database error) goes on
     * from where the board's last one stood.
     */
    track(authority: string, log: Logger) {
      let b = boards.get(authority)
      if (!b) boards.set(authority, (b = { since: now(), down: false, stalled: false, log }))
      const board = b
      return {
        read(outcome: 'page' | 'empty') {
          followReads.inc({ outcome })
          const at = now()
          if (board.stalled) {
            board.stalled = false
            board.log.info(
              { stalledSeconds: Math.round((at - board.since) / 1000) },
              'follow recovered: the board answered a page read again',
            )
          }
          board.since = at
        },
        failed() {
          followReads.inc({ outcome: 'failed' })
        },
      }
    },
    /** A followed board's status as the registry holds it now: one marked down is neither counted nor logged here. */
    status(authority: string, status: BoardStatus) {
      const b = boards.get(authority)
      if (b) b.down = status !== 'up'
    },
    /** Boards no longer followed here (removed, dropped, over quota, or the follow lock lost) are forgotten. */
    retain(followed: ReadonlySet<string>) {
      for (const authority of boards.keys()) if (!followed.has(authority)) boards.delete(authority)
    },
    check,
    /** The longest time since a followed board (not marked down) completed a page read, in seconds; 0 with none. */
    seconds(): number {
      const at = now()
      let most = 0
      for (const b of boards.values()) if (!b.down) most = Math.max(most, at - b.since)
      return most / 1000
    },
    /** Followed boards (not marked down) stalled now (checked first, so the count and the log agree). */
    stalled(): number {
      check()
      let n = 0
      for (const b of boards.values()) if (b.stalled && !b.down) n++
      return n
    },
  }
}
type FollowLag = ReturnType<typeof followLag>
export type FollowTrack = ReturnType<FollowLag['track']>
