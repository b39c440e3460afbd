/**
 * A board backup: JSON lines (NDJSON), written and read a batch at a time, so neither side ever
 * holds the board in memory.
 *
 *   {"t":"header","format":"wire-board-backup","version":1,"migrations":[…],"feedHead":{"seq":…,"changes":…},"fingerprintKey":"…","exportedAt":"…"}
 *   {"t":"board","row":{…}}            one line per row of each carried table, in CARRIED order
 *   {"t":"signals","row":{…}}          rows as PostgreSQL's row_to_json gives them (payload text verbatim)
 *   {"t":"end","counts":{"board":1,"signals":…}}
 *
 * The header comes first because a restore needs it before any row: the migration level to bring
 * the target to, and the feed head to make partitions for. The end line's counts tell a complete
 * file from a cut one: without it, nothing is restored.
 */
export const BACKUP_FORMAT = 'wire-board-backup'
export const BACKUP_VERSION = 1

/**
 * The tables a backup carries, in file order. Left out on purpose (docs/operations.md "Moving a
 * board"): `schema_migrations` (the target's runner keeps its own), pg-boss's schema (recurring
 * jobs, rescheduled at every start), `board.board_id` (the target keeps its own: it names wake-up
 * channels and Redis keys, so a restored copy never hears the original), and the partition layout
 * (the target makes its own ranges).
 */
export const CARRIED = ['board', 'stats_rollup', 'rules', 'stats_buckets', 'signals', 'idempotency_keys'] as const
export type CarriedTable = (typeof CARRIED)[number]

/** One-row tables: restored by an update of the target's row (its `one` key and the columns below stay). */
export const ONE_ROW: ReadonlySet<CarriedTable> = new Set(['board', 'stats_rollup'])
/** Columns of a one-row table that belong to the database, not to the board's content. */
export const LOCAL_COLUMNS = ['one', 'board_id', 'fingerprint_key']

export interface BackupHeader {
  t: 'header'
  format: typeof BACKUP_FORMAT
  version: number
  /** The source's applied migrations: the row shapes of this file. */
  migrations: string[]
  feedHead: { seq: number; changes: number }
  /** The key behind the board's local identity fingerprints: whoever holds the file can recompute ids from tokens. */
  fingerprintKey: string
  exportedAt: string
}

export type BackupCounts = Record<CarriedTable, number> & { pinned: number }

export const emptyCounts = (): BackupCounts => ({
  board: 0,
  stats_rollup: 0,
  rules: 0,
  stats_buckets: 0,
  signals: 0,
  idempotency_keys: 0,
  pinned: 0,
})

/** A backup or restore refused or failed in a way its operator can fix; the message says how. */
export class BackupError extends Error {
  override name = 'BackupError'
}
