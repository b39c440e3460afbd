import type { Ident } from '../types.js'

/**
 * The least distance `seq` moves forward when the board finds itself on a promoted standby: 2^32.
 * A stretch the old primary acknowledged and served but never replicated would be that many
 * signals of WAL the standby never received (terabytes); cursors are JSON numbers, exact to 2^53,
 * so a board can fail over a million times before they run out.
 */
const FAILOVER_JUMP = 2 ** 32

/** This cluster's current timeline (the first 8 hex digits of the WAL file being written). */
const TIMELINE = `('x' || left(pg_walfile_name(pg_current_wal_lsn()), 8))::bit(32)::int`

/**
 * A CTE `name` that takes `seqStep` seqs and `changesStep` change numbers from feed_head and
 * returns the new `seq` and `changes`. @NOTE the feed across a failover: feed_head records the
 * timeline its numbers were taken on. A promoted standby runs on a new timeline; the first statement
 * there moves `seq` to the next multiple of FAILOVER_JUMP at least FAILOVER_JUMP above it (no seq a
 * reader may have served from the lost primary is handed out again: a follower past the lost
 * stretch still sees every new signal) and records that point in `failover_seq` (readers reload
 * their tail when it changes). Under the row lock, so every writer agrees; null `timeline` (a board
 * not yet numbered since this was added) records it without a jump.
 */
export function takeFromHead(s: Ident, name: string, seqStep: string, changesStep: string): string {
  const moved = `f.timeline <> tl.id`
  const jumped = `(f.seq / ${FAILOVER_JUMP} + 2) * ${FAILOVER_JUMP}`
  return `tl as (select ${TIMELINE} as id),
    ${name} as (update ${s}.feed_head f set
      seq = (case when ${moved} then ${jumped} else f.seq end) + ${seqStep},
      failover_seq = case when ${moved} then ${jumped} else f.failover_seq end,
      changes = f.changes + ${changesStep},
      timeline = tl.id
    from tl returning f.seq, f.changes)`
}
