import type { FastifyInstance } from 'fastify'
import type { Config } from '../../libs/shared/config/index.js'
import { closeOnFailure } from '../../libs/shared/context/index.js'
import { createHttpApp, healthRoutes } from '../../libs/shared/http/index.js'
import type { StartedApp } from '../../libs/shared/lifecycle.js'
import type { Logger } from '../../libs/shared/log/index.js'
import { callers } from './callers.js'
import { createIdentityContext, type IdentityContext, type IdentityOptions } from './context.js'
import { startDecay } from './decay.js'
import { accountRoutes } from './routes/accounts.js'
import { bitsRoutes } from './routes/bits.js'
import { cardRoutes } from './routes/cards.js'
import { identityRoutes } from './routes/identity.js'

/**
 * The identity network (docs/identity.md "Running an identity network"): identities and their
 * tokens, verify for boards, derived tokens, bits and their ledger, accounts, cards. Its tables
 * live in IDENTITY_PG_SCHEMA; stateless processes, any number behind one Service.
 */
export async function startIdentity(
  cfg: Config,
  log: Logger,
  opts: IdentityOptions = {},
): Promise<StartedApp & { app: FastifyInstance; ctx: IdentityContext; decay: ReturnType<typeof startDecay> }> {
  const ctx = await createIdentityContext(cfg, log, opts)
  return closeOnFailure(ctx.close, async () => {
    const decay = startDecay(ctx)
    ctx.defer(() => decay.stop())
    const app = createHttpApp(log, cfg.http, ctx.budgets.limits) // every request spends its address's request budget first (verify has its own)
    app.register(healthRoutes, {
      ready: async () => {
        await ctx.db.query('select 1')
        return { ok: true }
      },
    })
    const who = callers(ctx)
    app.register(identityRoutes, { ctx, who })
    app.register(bitsRoutes, { ctx, who })
    app.register(accountRoutes, { ctx, who })
    app.register(cardRoutes, { ctx, who })
    const close = async () => {
      await app.close()
      await ctx.close()
    }
    return { app, ctx, decay, close }
  })
}
