import { loadConfigOrExit, runAgainWith } from '../../libs/shared/config/index.js'

const cfg = loadConfigOrExit()
runAgainWith({ semiSpaceMb: cfg.reader.semiSpaceMb }) // READER_SEMI_SPACE_MB: runs this process again with its young generation capped
// loaded only now: a process that runs itself again has not loaded them for nothing
const [{ serveUntilSignal }, { createLogger }, { startReader }, { startIdleGc }] = await Promise.all([
  import('../../libs/shared/lifecycle.js'),
  import('../../libs/shared/log/index.js'),
  import('./app.js'),
  import('../../libs/shared/idle-gc.js'),
])
const log = createLogger('reader', cfg.logLevel)
// IDLE_GC_INTERVAL_MS: a memory-reducing GC when the reader goes quiet after a burst (V8's own never starts on Node 24)
const idleGc = cfg.reader.idleGcIntervalMs > 0 ? startIdleGc({ minIntervalMs: cfg.reader.idleGcIntervalMs, rssBudgetBytes: cfg.reader.idleGcRssBudgetMb * 2 ** 20 }) : null
// close: every waiting long-poll is answered, then the pools
await serveUntilSignal(log, cfg, async () => {
  const reader = await startReader(cfg, log)
  idleGc?.afterStart() // once quiet: what start-up left (docs/benchmarks.md "RSS after load")
  return reader
})
idleGc?.stop()
