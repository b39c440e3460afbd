import { loadConfigOrExit } from '../../libs/shared/config/index.js'
import { serveUntilSignal } from '../../libs/shared/lifecycle.js'
import { createLogger } from '../../libs/shared/log/index.js'
import { startReader } from './app.js'

const cfg = loadConfigOrExit()
const log = createLogger('reader', cfg.logLevel)
await serveUntilSignal(log, cfg, () => startReader(cfg, log)) // close: every waiting long-poll is answered, then the pools
