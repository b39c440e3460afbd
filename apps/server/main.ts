import { loadConfigOrExit, runAgainWith } from '../../libs/shared/config/index.js'
import { exitIfNodeTooOld } from '../../libs/shared/node-floor.js'

exitIfNodeTooOld('wire') // before the first start's database work (runUntilSignal checks again, for the other roles)

const cfg = loadConfigOrExit()
// the board's one process holds a read side too (READER_SEMI_SPACE_MB); on the embedded database,
// WIRE_EMBEDDED_MALLOC_ARENAS and WIRE_EMBEDDED_WASM_OPTIMIZE
const embedded = cfg.db.kind === 'embedded' ? cfg.db : null
runAgainWith({ semiSpaceMb: cfg.reader.semiSpaceMb, mallocArenas: embedded?.mallocArenas ?? 0, wasmBaselineOnly: embedded ? !embedded.wasmOptimize : false })
// a first start on the embedded database creates it, then runs itself again without initdb's memory
if (embedded) await (await import('./first-start.js')).createEmbeddedDatabaseFirst(embedded, (line) => process.stderr.write(`${line}\n`))
// loaded only now: a process that runs itself again has not loaded them for nothing
const [{ runUntilSignal }, { createLogger }, { inCheckout }, { startBoard }, { welcome }, { startIdleGc }] = await Promise.all([
  import('../../libs/shared/lifecycle.js'),
  import('../../libs/shared/log/index.js'),
  import('../../libs/shared/paths.js'),
  import('./app.js'),
  import('./welcome.js'),
  import('../../libs/shared/idle-gc.js'),
])
const log = createLogger('server', cfg.logLevel)
// IDLE_GC_INTERVAL_MS: a memory-reducing GC when the board goes quiet after a burst (V8's own never starts on Node 24)
const idleGc = cfg.reader.idleGcIntervalMs > 0 ? startIdleGc({ minIntervalMs: cfg.reader.idleGcIntervalMs, rssBudgetBytes: cfg.reader.idleGcRssBudgetMb * 2 ** 20 }) : null
await runUntilSignal(log, async () => {
  const board = await startBoard(cfg, log)
  const address = await board.app.listen({ host: cfg.host, port: cfg.port, backlog: cfg.http.listenBacklog }).catch(async (err: unknown) => {
    await board.close()
    throw err
  })
  log.info({ address, database: cfg.db.kind, bus: cfg.redisUrl && cfg.db.kind === 'postgres' ? 'redis' : 'in-process' }, 'wire board ready')
  process.stdout.write(welcome(cfg, address, (await board.reader.readSide.board.meta()).name, inCheckout()))
  idleGc?.afterStart() // once quiet: what start-up left (docs/benchmarks.md "RSS after load")
  return () => board.close() // long-polls answered, publishes committed, sweeper stopped; then the database (PGlite flushes)
}, { databaseUrl: cfg.db.kind === 'postgres' ? cfg.db.url : undefined })
idleGc?.stop()
