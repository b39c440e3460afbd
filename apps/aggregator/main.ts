import { loadConfigOrExit } from '../../libs/shared/config/index.js'
import { serveUntilSignal } from '../../libs/shared/lifecycle.js'
import { createLogger } from '../../libs/shared/log/index.js'
import { startAggregator } from './app.js'
import { databaseStartHint } from './start-hint.js'

const cfg = loadConfigOrExit()
const log = createLogger('aggregator', cfg.logLevel)
await serveUntilSignal(log, cfg, () =>
  startAggregator(cfg, log).catch((err: unknown) => {
    const hint = cfg.db.kind === 'postgres' ? databaseStartHint(err, cfg.db.url) : null
    if (!hint) throw err
    process.stderr.write(`wire: ${hint}\n`)
    process.exit(1)
  }),
)
