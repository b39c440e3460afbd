import type { Db } from './types.js'

/**
 * Whether an acknowledged publish survives the loss of the primary: it does when a synchronous
 * standby confirms every commit before the writer answers (docs/operations.md "Failover").
 */
export interface Durability {
  /** True: commits wait for a synchronous standby that is connected now. False: a failover may lose the newest acknowledged signals. */
  synchronousStandby: boolean
  /** `synchronous_commit` on the primary (null: embedded, or not known yet). */
  synchronousCommit: string | null
  /** `synchronous_standby_names` on the primary ('' when none). */
  standbyNames: string | null
  /** Standbys the primary reports as `sync` or `quorum` (null: the role may not see pg_stat_replication's states). */
  syncStandbys: number | null
}

const EMBEDDED: Durability = { synchronousStandby: false, synchronousCommit: null, standbyNames: null, syncStandbys: null }
/** `synchronous_commit` values that wait for the standby (off and local do not). */
const WAITS = new Set(['on', 'remote_write', 'remote_apply'])

// sync_state reads null for a role without pg_read_all_stats: then the settings alone answer
const SQL = `select current_setting('synchronous_commit') as commit, current_setting('synchronous_standby_names') as names,
  (select count(*) filter (where sync_state in ('sync', 'quorum')) from pg_stat_replication)::int as sync,
  (select count(*) filter (where sync_state is null) from pg_stat_replication)::int as hidden`

/** Reads the primary's replication settings and states: one small query, whenever `refresh` is called. */
export async function readDurability(db: Db): Promise<Durability> {
  if (db.kind === 'embedded') return EMBEDDED
  const r = (await db.query<{ commit: string; names: string; sync: number; hidden: number }>(SQL)).rows[0]!
  const configured = WAITS.has(r.commit) && r.names.trim() !== ''
  const syncStandbys = r.hidden > 0 && r.sync === 0 ? null : r.sync
  return { synchronousStandby: configured && syncStandbys !== 0, synchronousCommit: r.commit, standbyNames: r.names, syncStandbys }
}
