/** Nothing younger than this is ever purged: the unverified thread limit counts the last 24 h (threadsInLastDay). */
export const PURGE_FLOOR_SECONDS = 86_400

/** The default partition of `signals`: rows carried forward out of dropped partitions (signals/partitions.ts). */
export const KEPT_PARTITION = 'signals_kept'
