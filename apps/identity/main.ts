import { loadConfigOrExit } from '../../libs/shared/config/index.js'
import { serveUntilSignal } from '../../libs/shared/lifecycle.js'
import { createLogger } from '../../libs/shared/log/index.js'
import { startIdentity } from './app.js'

const cfg = loadConfigOrExit()
const log = createLogger('identity', cfg.logLevel)
await serveUntilSignal(log, cfg, () => startIdentity(cfg, log))
