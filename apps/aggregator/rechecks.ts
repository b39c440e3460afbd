import { PgBoss } from 'pg-boss'
import { bossConnection, bossSchemaName, createBossQueue, offerEverySlot } from '../../libs/shared/db/index.js'
import type { AggregatorContext } from './context.js'
import { recheckRuns } from './metrics.js'
import { recheckBoards, type RecheckDeps } from './registry/recheck.js'

const RECHECK_JOB = 'wire.aggregator-recheck'

/** What one recheck pass works with, from the aggregator's parts. */
export const recheckDeps = (ctx: AggregatorContext, log = ctx.log, timeoutMs = ctx.cfg.aggregator.fetchTimeoutMs): RecheckDeps => ({
  registry: ctx.registry,
  store: ctx.store,
  index: ctx.index,
  dispatcher: ctx.agent,
  timeoutMs,
  quota: { rows: ctx.cfg.aggregator.boardRowsMax, bytes: ctx.cfg.aggregator.boardBytesMax },
  forgetDroppedSeconds: ctx.cfg.aggregator.dropAfterSeconds,
  log,
  changed: ctx.proxy.forget,
})

/**
 * pg-boss in a schema of its own offers one recheck per AGGREGATOR_RECHECK_SECONDS slot, however
 * many aggregator processes run; the process whose offer creates the slot's job runs it.
 */
export async function startRechecks(ctx: AggregatorContext) {
  const log = ctx.log.child({ mod: 'recheck' })
  const interval = ctx.cfg.aggregator.recheckSeconds
  const url = ctx.cfg.db.kind === 'postgres' ? ctx.cfg.db.url : undefined
  const boss = new PgBoss({
    ...bossConnection(ctx.db, url, ctx.cfg.links.db, { applicationName: 'wire-aggregator-boss', max: 2 }),
    schema: bossSchemaName(ctx.cfg.aggregator.schema),
    schedule: false,
  })
  boss.on('error', (err) => log.error({ err }, 'pg-boss error'))
  const stopping = new AbortController()
  await boss.start()
  try {
    await createBossQueue(boss, RECHECK_JOB)
    const deps = recheckDeps(ctx, log)
    const workId = await boss.work(RECHECK_JOB, async (jobs: Array<{ signal: AbortSignal }>) => {
      try {
        const counts = await recheckBoards(deps, AbortSignal.any([stopping.signal, ...jobs.map((j) => j.signal)]))
        recheckRuns.inc({ outcome: 'complete' })
        ctx.followers.sync() // down or dropped boards stop, boards back under their quota start again
        return counts
      } catch (err) {
        recheckRuns.inc({ outcome: 'failed' })
        log.warn({ err: String(err) }, 'recheck failed; the next slot runs it again')
        throw err
      }
    })
    const offers = offerEverySlot(
      boss,
      new Map([[RECHECK_JOB, workId]]),
      { key: 'recheck', intervalSeconds: interval },
      stopping.signal,
      log,
    )
    return {
      async stop() {
        stopping.abort()
        await offers.stop()
        await boss.stop({ graceful: true, timeout: 5_000 })
      },
    }
  } catch (err) {
    await boss.stop({ graceful: false }).catch(() => {})
    throw err
  }
}
