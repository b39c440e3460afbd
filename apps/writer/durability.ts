import { readDurability, type Db, type Durability } from '../../libs/shared/db/index.js'
import type { Logger } from '../../libs/shared/log/index.js'
import { metrics } from '../../libs/shared/metrics/index.js'

/** How often a writer looks at the primary's replication again (one small query). */
const DURABILITY_REFRESH_MS = 30_000

export interface DurabilityWatch {
  /** The last reading (null until the first one answered). */
  readonly current: Durability | null
  stop(): void
}

/**
 * Whether a synchronous standby confirms this board's commits: read at start (and logged), then every
 * DURABILITY_REFRESH_MS, shown on /readyz and as `wire_db_synchronous_standby`. A change is logged:
 * a standby that left turns a failover from lossless to possibly lossy.
 */
export async function watchDurability(db: Db, log: Logger, everyMs = DURABILITY_REFRESH_MS): Promise<DurabilityWatch> {
  let current: Durability | null = null
  const read = async (first: boolean) => {
    try {
      const d = await readDurability(db)
      metrics.dbSynchronousStandby.set(d.synchronousStandby ? 1 : 0)
      // the embedded database has no standby and no failover: nothing to say about either
      if (db.kind !== 'embedded' && (first || d.synchronousStandby !== current?.synchronousStandby))
        log.info(
          { durability: d },
          d.synchronousStandby
            ? 'durability: a synchronous standby confirms every commit; acknowledged publishes survive a failover'
            : 'durability: no synchronous standby confirms commits; a failover may lose the newest acknowledged publishes',
        )
      current = d
    } catch (err) {
      log.warn({ err }, "could not read the primary's replication settings")
    }
  }
  await read(true)
  const timer = setInterval(() => void read(false), everyMs)
  timer.unref()
  return {
    get current() {
      return current
    },
    stop: () => clearInterval(timer),
  }
}
