import { setTimeout as sleep } from 'node:timers/promises'
import type { Db, Ident, Tx } from '../types.js'
import { KEPT_PARTITION } from './retention.js'

/**
 * How long partition DDL waits for its locks, in ms: well under PostgreSQL's deadlock_timeout (1 s
 * by default), so in any cycle of waits the DDL gives up first (see `lockForDdl`).
 */
const DDL_LOCK_WAIT_MS = 200
/** Tries of a DDL transaction whose locks were busy, before the error goes to its caller (who tries again later). */
const DDL_TRIES = 5

// @NOTE making or detaching a partition takes ACCESS EXCLUSIVE on `signals`, its default partition,
// `signal_tags` and its default partition (and on the partition detached). No one order of those
// suits everyone else: a tag page reads signal_tags before signals, the writer and the row purge
// take signals (or a partition) first, and the purge of a partition holds its row locks before it
// deletes. Taking them one statement at a time, DDL could close a cycle, and PostgreSQL's deadlock
// detector would end whichever waiter looks first: a reader's page, a purge, or the DDL. So DDL
// takes every lock it needs before anything else, in one order, waiting at most DDL_LOCK_WAIT_MS:
// in any cycle it is the one that gives up (the detector looks only after deadlock_timeout),
// releases all, and its transaction runs again. Nobody else's statement fails for its sake.

/** The LOCK statement for partition DDL: the parents alone (`only`), then the default partitions and `also`. */
function ddlLockSql(s: Ident, also: readonly string[] = []): string {
  const kept = (t: string) => `${s}.${t}`
  return `lock table only ${s}.signals, ${kept(KEPT_PARTITION)}, only ${s}.signal_tags, ${kept('signal_tags_kept')}${also
    .map((r) => `, ${r}`)
    .join('')} in access exclusive mode`
}

/** A lock wait that ran out (SQLSTATE 55P03): the DDL's turn to give way. */
const lockBusy = (e: unknown) => (e as { code?: string } | null)?.code === '55P03'

/** Takes the DDL's locks in `tx` (ddlLockSql), waiting at most `waitMs`. */
export async function lockForDdl(tx: Tx, s: Ident, also: readonly string[] = [], waitMs = DDL_LOCK_WAIT_MS): Promise<void> {
  await tx.exec(`set local lock_timeout = '${waitMs}ms'; ${ddlLockSql(s, also)}`)
}

/**
 * Runs `fn` in a transaction that first takes the advisory lock `key` (DDL callers queue behind each
 * other there, holding nothing else); `fn` calls `lock` before its DDL (`lockForDdl`, with the
 * relations it detaches). A lock wait that ran out rolls the whole transaction back, and it runs
 * again after a growing pause, DDL_TRIES times in all; then the error goes to the caller.
 */
export async function ddlTransaction<T>(
  db: Db,
  s: Ident,
  key: string,
  fn: (tx: Tx, lock: (also?: readonly string[]) => Promise<void>) => Promise<T>,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.transaction(async (tx) => {
        await tx.query(`select pg_advisory_xact_lock(hashtextextended($1, 0))`, [key])
        return fn(tx, (also) => lockForDdl(tx, s, also))
      })
    } catch (e) {
      if (!lockBusy(e) || attempt >= DDL_TRIES) throw e
      await sleep(attempt * DDL_LOCK_WAIT_MS * (0.5 + Math.random()))
    }
  }
}
