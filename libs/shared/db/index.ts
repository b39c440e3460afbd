export * from './types.js'
export { pgDeadlines, postgresDb } from './postgres.js'
export { DatabaseUnavailable, isConnectionError, isDataError } from './errors.js'
export { failoverDb } from './failover.js'
export { pgliteDb, embeddedDatabaseExists, EMBEDDED_SHARED_BUFFERS_MB } from './pglite.js'
export { templateUsable } from './pglite-template.js'
export { migrate, listMigrations } from './migrate.js'
export {
  signalReader,
  SCAN_BUDGET,
  TEXT_SCAN_BUDGET,
  type SignalReader,
  type Page,
  type SeqChunk,
} from './signals/read.js'
export { signalWriter, type SignalWriter, type NewSignal } from './signals/write.js'
export { boardReader, type BoardReader, type BoardMeta, type Rule } from './board/read.js'
export { readBoardId, readStoredFingerprintKey } from './board/board-id.js'
export { boardWriter, type BoardWriter } from './board/write.js'
export {
  signalPartitions,
  partitionSql,
  type RetireReport,
  CARRY_MAX_ROWS,
} from './signals/partitions.js'
export { ddlTransaction } from './signals/partition-locks.js'
export { signalPurger, type SignalPurger, type PurgeKind } from './signals/purge.js'
export { statsReader, activeCountsSql, STATS_MAX_BUCKETS, type StatsReader } from './stats/read.js'
export { statsWriter, type StatsWriter } from './stats/write.js'
export { bossConnection, bossSchemaName, createBossQueue, offerEverySlot } from './boss.js'
export { idempotencyKeys, type IdempotencyKeys, REMOVED, type Reservation } from './signals/idempotency.js'
export { originsOf, type Origins } from './signals/origins.js'
export { writeBoardBackup } from './backup/write.js'
export { restoreBoardBackup, type RestoreReport } from './backup/read.js'
export { BackupError, type BackupCounts } from './backup/format.js'
export { readDurability, type Durability } from './durability.js'
