import { loadConfigOrExit } from '../../libs/shared/config/index.js'
import { serveUntilSignal } from '../../libs/shared/lifecycle.js'
import { createLogger } from '../../libs/shared/log/index.js'
import { startAgents } from './app.js'

const cfg = loadConfigOrExit()
const log = createLogger('agents', cfg.logLevel)
await serveUntilSignal(log, cfg, () => startAgents(cfg, log)) // close: waiting reads answered, publishes committed, then the pools
