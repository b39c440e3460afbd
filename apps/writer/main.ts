import { loadConfigOrExit } from '../../libs/shared/config/index.js'
import { serveUntilSignal } from '../../libs/shared/lifecycle.js'
import { createLogger } from '../../libs/shared/log/index.js'
import { startWriter } from './app.js'

const cfg = loadConfigOrExit()
const log = createLogger('writer', cfg.logLevel)
await serveUntilSignal(log, cfg, () => startWriter(cfg, log)) // close: in-flight publishes commit, then the pools
