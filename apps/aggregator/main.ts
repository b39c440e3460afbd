import { loadConfigOrExit } from '../../libs/shared/config/index.js'
import { tuneProcess } from '../../libs/shared/runtime/index.js'

const cfg = loadConfigOrExit()
// the proxy is a read side (thousands of waiting long-polls, bursts of answers) and the follower
// reads and indexes pages in bursts: the young generation capped (READER_SEMI_SPACE_MB), and the
// memory of a burst given back once it is quiet (IDLE_GC_INTERVAL_MS), as a reader's
const tuning = await tuneProcess(cfg, { readSide: true })
// loaded only now: a process that runs itself again has not loaded them for nothing
const [{ serveUntilSignal }, { createLogger }, { startAggregator }] = await Promise.all([
  import('../../libs/shared/lifecycle.js'),
  import('../../libs/shared/log/index.js'),
  import('./app.js'),
])
const log = createLogger('aggregator', cfg.logLevel)
// a database it cannot use is one line naming DATABASE_URL (lifecycle's database hint), as for every role
await serveUntilSignal(log, cfg, async () => {
  const aggregator = await startAggregator(cfg, log)
  tuning.afterStart()
  return aggregator
})
tuning.stop()
