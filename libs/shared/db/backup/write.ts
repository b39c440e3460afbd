import { listMigrations } from '../migrate.js'
import { IDEMPOTENCY_WINDOW_SECONDS } from '../signals/idempotency.js'
import { keptRowsSql } from '../signals/partition-drop.js'
import { statsWriter } from '../stats/write.js'
import { ident, type Db, type Ident } from '../types.js'
import {
  BACKUP_FORMAT,
  BACKUP_VERSION,
  BackupError,
  CARRIED,
  emptyCounts,
  LOCAL_COLUMNS,
  type BackupCounts,
  type BackupHeader,
  type CarriedTable,
} from './format.js'

export interface BackupOptions {
  /** The key the board's fingerprints use now (FINGERPRINT_SECRET, the stored key, or the derived one). */
  fingerprintKey: string
  /** SIGNAL_SWEEP_GRACE_SECONDS: a signal the sweeper would keep is carried, one it may purge is not. */
  graceSeconds: number
}

/** Rows fetched per round trip: a signal's payload is at most 64 KiB, so a batch stays a few MiB at worst. */
const FETCH_ROWS = 200

/**
 * Each carried table's lines, produced by PostgreSQL itself (row_to_json: timestamps with their
 * microseconds, payload text verbatim), in an order a restore can replay.
 */
function selects(s: Ident): Record<CarriedTable, string> {
  const line = (table: string, row: string) => `json_build_object('t', '${table}', 'row', ${row})::text as line`
  return {
    board: `select ${line('board', `to_jsonb(x) - array[${LOCAL_COLUMNS.map((c) => `'${c}'`).join(', ')}]`)} from ${s}.board x`,
    stats_rollup: `select ${line('stats_rollup', `to_jsonb(x) - 'one'`)} from ${s}.stats_rollup x`,
    rules: `select ${line('rules', 'row_to_json(x)')} from ${s}.rules x order by created_at, id`,
    stats_buckets: `select ${line('stats_buckets', 'row_to_json(x)')} from ${s}.stats_buckets x order by at, origin`,
    // @NOTE exactly the rows the sweeper would keep (the one retention rule, signals/partition-drop.ts):
    // live and pinned signals, expired ones still within the grace, anything from the last 24 h
    signals: `select ${line('signals', 'row_to_json(x)')}, x.pinned from ${s}.signals x
      where x.seq in (${keptRowsSql(`${s}.signals`)}) order by x.seq`,
    idempotency_keys: `select ${line('idempotency_keys', 'row_to_json(x)')} from ${s}.idempotency_keys x
      where created_at > now() - ${IDEMPOTENCY_WINDOW_SECONDS} * interval '1 second' order by created_at`,
  }
}

/**
 * Writes the board in `schema` as a backup (format.ts), one line at a time through `write` (which
 * should wait for its stream to drain). Reads one snapshot (repeatable read), so a board that keeps
 * running on PostgreSQL is backed up as it stood at one instant.
 */
export async function writeBoardBackup(
  db: Db,
  schema: string,
  o: BackupOptions,
  write: (line: string) => Promise<void>,
): Promise<BackupCounts> {
  const s = ident(schema)
  // count every signal into the stats history first, as the sweeper would: a signal the backup
  // leaves out is then already in stats_buckets
  const stats = statsWriter(db, s)
  let r = await stats.rollUp(50_000)
  while (r && !r.caughtUp) r = await stats.rollUp(50_000)
  const sql = selects(s)
  return db.transaction(async (tx) => {
    await tx.exec('set transaction isolation level repeatable read, read only')
    const migrations = (await tx.query<{ name: string }>(`select name from ${s}.schema_migrations order by name`)).rows.map((r) => r.name)
    const known = new Set(listMigrations().map((m) => m.name))
    const unknown = migrations.filter((m) => !known.has(m))
    if (unknown.length)
      throw new BackupError(
        `schema ${schema} has migrations this Wire does not know (${unknown.join(', ')}): back it up with the Wire that ran them`,
      )
    const head = (await tx.query<{ seq: string | number; changes: string | number }>(`select seq, changes from ${s}.feed_head`)).rows[0]!
    const header: BackupHeader = {
      t: 'header',
      format: BACKUP_FORMAT,
      version: BACKUP_VERSION,
      migrations,
      feedHead: { seq: Number(head.seq), changes: Number(head.changes) },
      fingerprintKey: o.fingerprintKey,
      exportedAt: new Date().toISOString(),
    }
    await write(JSON.stringify(header))
    const counts = emptyCounts()
    for (const table of CARRIED) {
      await tx.query(`declare backup_rows no scroll cursor for ${sql[table]}`, table === 'signals' ? [o.graceSeconds] : [])
      for (;;) {
        const { rows } = await tx.query<{ line: string; pinned?: boolean }>(`fetch ${FETCH_ROWS} from backup_rows`)
        for (const r of rows) {
          await write(r.line)
          counts[table]++
          if (r.pinned) counts.pinned++
        }
        if (rows.length < FETCH_ROWS) break
      }
      await tx.exec('close backup_rows')
    }
    await write(JSON.stringify({ t: 'end', counts }))
    return counts
  })
}
