import { loadConfigOrExit } from '../../libs/shared/config/index.js'
import { createHttpApp, healthRoutes } from '../../libs/shared/http/index.js'
import { openInfra } from '../../libs/shared/infra/index.js'
import { runUntilSignal } from '../../libs/shared/lifecycle.js'
import { createLogger } from '../../libs/shared/log/index.js'
import { startSweeper } from './sweeper.js'

const cfg = loadConfigOrExit()
const log = createLogger('sweeper', cfg.logLevel)
await runUntilSignal(log, async () => {
  // @NOTE the embedded database belongs to one process (two PGlite instances on one directory corrupt
  // it), and `npm start` already runs the sweeper inside that process
  if (cfg.db.kind === 'embedded') throw new Error('the sweeper process needs DATABASE_URL; `npm start` runs the sweeper itself on the embedded database')
  const infra = await openInfra(cfg, log) // the writer migrates; the sweeper uses the primary only
  const sweeper = await startSweeper(cfg, log, infra).catch(async (err: unknown) => {
    await infra.close()
    throw err
  })
  // /healthz and /readyz for the orchestrator; the sweeper serves nothing else
  const app = createHttpApp(log, cfg.http)
  app.register(healthRoutes, { ready: () => sweeper.ready() })
  const address = await app.listen({ host: cfg.host, port: cfg.port })
  log.info({ address }, 'sweeper listening')
  return async () => {
    await sweeper.stop() // readiness turns 503 at once; the job in flight finishes its batch
    await app.close()
    await infra.close() // then the pool
  }
})
