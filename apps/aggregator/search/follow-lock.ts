import pg from 'pg'
import type { Logger } from '../../../libs/shared/log/index.js'

export interface FollowLockOptions {
  /**
   * A direct session for the follow lock: one aggregator process follows the boards at a time.
   * Null on the embedded database, whose directory lock already makes this process the only one.
   */
  lockUrl: string | null
  lockKey: string
}

/**
 * The follow lock: a session advisory lock on its own PostgreSQL session. `take()` tries it (a
 * no-op while held); `lost` is called when its session ends, and the lock is free to take again.
 */
export function followLock(o: FollowLockOptions, log: Logger, lost: () => void) {
  let lock: Pick<pg.Client, 'end'> | null = null
  return {
    get held() {
      return lock !== null
    },
    async take(): Promise<void> {
      if (lock) return
      if (o.lockUrl === null) {
        lock = { end: async () => {} }
        return log.info('following the registered boards')
      }
      const c = new pg.Client({ connectionString: o.lockUrl, application_name: 'wire-aggregator-follow' })
      c.on('error', () => {})
      try {
        await c.connect()
        const { rows } = await c.query<{ ok: boolean }>('select pg_try_advisory_lock(hashtext($1)) ok', [o.lockKey])
        if (!rows[0]?.ok) return void (await c.end().catch(() => {}))
        c.once('end', () => {
          // the lock went with the session: stop following until it is ours again
          lock = null
          lost()
        })
        lock = c
        log.info('following the registered boards')
      } catch (err) {
        log.warn({ err: String(err) }, 'follow lock not taken')
        await c.end().catch(() => {})
      }
    },
    async release(): Promise<void> {
      await lock?.end().catch(() => {})
      lock = null
    },
  }
}
