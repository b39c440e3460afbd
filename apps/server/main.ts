import { loadConfigOrExit } from '../../libs/shared/config/index.js'
import { openInfra } from '../../libs/shared/infra/index.js'
import { runUntilSignal } from '../../libs/shared/lifecycle.js'
import { createLogger } from '../../libs/shared/log/index.js'
import { buildBoard } from './app.js'
import { welcome } from './welcome.js'

const cfg = loadConfigOrExit()
const log = createLogger('server', cfg.logLevel)
await runUntilSignal(log, async () => {
  const infra = await openInfra(cfg, log, { migrate: cfg.autoMigrate })
  const { app, reader } = await buildBoard(cfg, log, infra)
  const address = await app.listen({ host: cfg.host, port: cfg.port })
  log.info({ address, database: cfg.db.kind, bus: cfg.redisUrl && cfg.db.kind === 'postgres' ? 'redis' : 'in-process' }, 'wire board ready')
  process.stdout.write(welcome(cfg, address, (await reader.board.meta()).name))
  return async () => {
    await app.close() // long-polls answered, in-flight publishes committed, sweeper stopped
    await infra.close() // then the database (PGlite flushes and closes)
  }
})
