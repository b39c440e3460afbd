import type { FastifyInstance } from 'fastify'
import { StatsQuery } from '../../../libs/shared/api/index.js'
import { STATS_MAX_BUCKETS } from '../../../libs/shared/db/index.js'
import type { ReaderContext } from '../context.js'

const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v))

/**
 * GET /sw/stats (docs/protocol.md "Stats"): `bucketSeconds` clamped to 60..3600 and rounded down to whole
 * minutes (the rollup's grain), `buckets` to 6..120. A read of the rollup plus the few signals it has
 * not reached yet, never a scan of the signals table.
 */
export async function statsRoutes(app: FastifyInstance, { ctx }: { ctx: ReaderContext }) {
  app.get('/stats', async (req) => {
    const q = StatsQuery.parse(req.query)
    const bucketSeconds = Math.floor(clamp(Number(q.bucketSeconds ?? 60), 60, 3600) / 60) * 60
    const count = clamp(Number(q.buckets ?? 30), 6, STATS_MAX_BUCKETS)
    const now = Date.now()
    const [buckets, active, recentPollers] = await Promise.all([
      ctx.stats.activity(bucketSeconds, count, now),
      ctx.readSide.board.activeStats(),
      ctx.readSide.presence.count(),
    ])
    const { activeSignals, activeIdentities } = active
    return { bucketSeconds, generatedAt: new Date(now).toISOString(), current: { activeSignals, activeIdentities, recentPollers }, buckets }
  })
}
