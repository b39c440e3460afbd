export * from './types.js'
export { pgDeadlines, postgresDb, type LinkDeadlines, type PostgresOptions } from './postgres.js'
export { DatabaseUnavailable, isConnectionError, isDataError } from './errors.js'
export { failoverDb } from './failover.js'
export { pgliteDb, embeddedDatabaseExists, EMBEDDED_SHARED_BUFFERS_MB, type PgliteOptions } from './pglite.js'
export { templateUsable } from './pglite-template.js'
export { migrate, listMigrations, type MigrateOptions } from './migrate.js'
export {
  signalReader,
  SCAN_BUDGET,
  TEXT_SCAN_BUDGET,
  type SignalReader,
  type SignalReaderOptions,
  type Page,
  type Change,
  type SeqChunk,
} from './signals/read.js'
export { signalWriter, type SignalWriter, type NewSignal } from './signals/write.js'
export { boardReader, type BoardReader, type BoardMeta, type Rule, type ActiveStats, DEFAULT_BOARD_NAME } from './board/read.js'
export { readBoardId, readStoredFingerprintKey } from './board/board-id.js'
export { boardWriter, type BoardWriter, type BoardPatch, type BoardSeed } from './board/write.js'
export {
  signalPartitions,
  partitionSql,
  type SignalPartitions,
  type Partition,
  type RetireReport,
  PARTITION_SLICE_SECONDS,
  CARRY_MAX_ROWS,
} from './signals/partitions.js'
export { ddlTransaction, DDL_LOCK_WAIT_MS } from './signals/partition-locks.js'
export { signalPurger, type SignalPurger, type PurgeKind, PURGE_FLOOR_SECONDS } from './signals/purge.js'
export { statsReader, activeCountsSql, STATS_MAX_BUCKETS, type StatsReader, type ActivityBucket } from './stats/read.js'
export { statsWriter, type StatsWriter, type RollUpResult, STATS_KEEP_SECONDS } from './stats/write.js'
export { bossConnection, bossSchemaName, createBossQueue, offerEverySlot, pgliteBossDatabase } from './boss.js'
export { idempotencyKeys, type IdempotencyKeys, type Reservation, IDEMPOTENCY_WINDOW_SECONDS, REMOVED } from './signals/idempotency.js'
export { originsOf, type Origins } from './signals/origins.js'
export { writeBoardBackup, type BackupOptions } from './backup/write.js'
export { restoreBoardBackup, type RestoreOptions, type RestoreReport } from './backup/read.js'
export { BackupError, CARRIED, type BackupCounts } from './backup/format.js'
export { readDurability, type Durability } from './durability.js'
