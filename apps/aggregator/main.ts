import { loadConfigOrExit } from '../../libs/shared/config/index.js'
import { serveUntilSignal } from '../../libs/shared/lifecycle.js'
import { createLogger } from '../../libs/shared/log/index.js'
import { startAggregator } from './app.js'

const cfg = loadConfigOrExit()
const log = createLogger('aggregator', cfg.logLevel)
// a database it cannot use is one line naming DATABASE_URL (lifecycle's database hint), as for every role
await serveUntilSignal(log, cfg, () => startAggregator(cfg, log))
