import type { IdentityContext } from './context.js'
import { identityEvents } from './metrics.js'

/** How often the decay sweep runs. Every process runs it; a row is decayed once (skip locked, a condition on decayed_at). */
const DECAY_SWEEP_MS = 3_600_000

/**
 * Instant identities decay after IDENTITY_DECAY_DAYS without earning bits (a transfer received):
 * their tokens stop verifying and their bits leave the ledger. Claimed identities never decay.
 * Driven by the context's clock, so a test moves time instead of waiting for it.
 */
export function startDecay(ctx: IdentityContext) {
  const idleMs = ctx.cfg.identityNetwork.decayDays * 86_400_000
  let running: Promise<number> | null = null
  let queued: Promise<number> | null = null
  const sweep = async (): Promise<number> => {
    let total = 0
    for (;;) {
      const now = ctx.clock.now()
      const n = await ctx.identities.decay(now - idleMs, now)
      total += n
      if (n < 1000) break
    }
    if (total > 0) {
      identityEvents.inc({ event: 'decayed' }, total)
      ctx.log.info({ decayed: total }, 'idle instant identities decayed')
    }
    return total
  }
  /**
   * One sweep at a time; asked during one, one more runs after it (reading the time when it starts),
   * however many asked meanwhile.
   */
  const run = (): Promise<number> => {
    if (!running) return (running = sweep().finally(() => (running = null)))
    return (queued ??= running.catch(() => 0).then(() => ((queued = null), run())))
  }
  const tick = ctx.clock.every(DECAY_SWEEP_MS, () => void run().catch((err: unknown) => ctx.log.warn({ err }, 'decay sweep failed')))
  return {
    run,
    async stop() {
      tick.stop()
      await running?.catch(() => {})
    },
  }
}
