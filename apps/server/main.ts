import { loadConfigOrExit } from '../../libs/shared/config/index.js'
import { runUntilSignal } from '../../libs/shared/lifecycle.js'
import { createLogger } from '../../libs/shared/log/index.js'
import { inCheckout } from '../../libs/shared/paths.js'
import { startBoard } from './app.js'
import { welcome } from './welcome.js'

const cfg = loadConfigOrExit()
const log = createLogger('server', cfg.logLevel)
await runUntilSignal(log, async () => {
  const board = await startBoard(cfg, log)
  const address = await board.app.listen({ host: cfg.host, port: cfg.port }).catch(async (err: unknown) => {
    await board.close()
    throw err
  })
  log.info({ address, database: cfg.db.kind, bus: cfg.redisUrl && cfg.db.kind === 'postgres' ? 'redis' : 'in-process' }, 'wire board ready')
  process.stdout.write(welcome(cfg, address, (await board.reader.board.meta()).name, inCheckout()))
  return () => board.close() // long-polls answered, publishes committed, sweeper stopped; then the database (PGlite flushes)
})
