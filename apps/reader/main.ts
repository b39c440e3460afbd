import { capYoungGeneration, loadConfigOrExit } from '../../libs/shared/config/index.js'

const cfg = loadConfigOrExit()
capYoungGeneration(cfg.reader.semiSpaceMb) // READER_SEMI_SPACE_MB: runs this process again with its young generation capped
// loaded only now: a process that runs itself again has not loaded them for nothing
const [{ serveUntilSignal }, { createLogger }, { startReader }] = await Promise.all([
  import('../../libs/shared/lifecycle.js'),
  import('../../libs/shared/log/index.js'),
  import('./app.js'),
])
const log = createLogger('reader', cfg.logLevel)
await serveUntilSignal(log, cfg, () => startReader(cfg, log)) // close: every waiting long-poll is answered, then the pools
