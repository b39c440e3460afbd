import type { FastifyInstance } from 'fastify'
import type { Config } from '../../libs/shared/config/index.js'
import { createHttpApp, healthRoutes } from '../../libs/shared/http/index.js'
import { closeOnFailure, createAppContext } from '../../libs/shared/context/index.js'
import type { StartedApp } from '../../libs/shared/lifecycle.js'
import type { Logger } from '../../libs/shared/log/index.js'
import { createSweeper, type Sweeper } from './sweeper.js'

/**
 * The sweeper process: pg-boss jobs on the primary, and /healthz and /readyz for the orchestrator
 * (it serves nothing else). It needs PostgreSQL: `npm start` runs the sweeper itself on the embedded database.
 */
export async function startSweeper(cfg: Config, log: Logger): Promise<StartedApp & { app: FastifyInstance; sweeper: Sweeper }> {
  // @NOTE the embedded database belongs to one process (two PGlite instances on one directory corrupt it)
  if (cfg.db.kind === 'embedded')
    throw new Error('the sweeper process needs DATABASE_URL; `npm start` runs the sweeper itself on the embedded database')
  const root = await createAppContext(cfg, log, { roles: ['sweeper'] }) // the writer migrates; the sweeper uses the primary only and waits on no wake-up
  return closeOnFailure(root.close, async () => {
    const sweeper = await createSweeper(cfg, log, root.infra)
    root.defer(() => sweeper.stop()) // readiness turns 503 at once; the job in flight finishes its batch
    const app = createHttpApp(log, cfg.http, root.infra.limits)
    app.register(healthRoutes, { ready: () => sweeper.ready() })
    app.addHook('preClose', async () => await sweeper.stop())
    return { app, sweeper, close: async () => (await app.close(), await root.close()) }
  })
}
