import { loadConfigOrExit } from '../../libs/shared/config/index.js'
import { tuneProcess } from '../../libs/shared/runtime/index.js'

const cfg = loadConfigOrExit()
const tuning = await tuneProcess(cfg, { readSide: true })
// loaded only now: a process that runs itself again has not loaded them for nothing
const [{ serveUntilSignal }, { createLogger }, { startReader }] = await Promise.all([
  import('../../libs/shared/lifecycle.js'),
  import('../../libs/shared/log/index.js'),
  import('./app.js'),
])
const log = createLogger('reader', cfg.logLevel)
// close: every waiting long-poll is answered, then the pools
await serveUntilSignal(log, cfg, async () => {
  const reader = await startReader(cfg, log)
  tuning.afterStart()
  return reader
})
tuning.stop()
