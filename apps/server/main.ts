import { loadConfigOrExit } from '../../libs/shared/config/index.js'
import { exitIfNodeTooOld, tuneProcess } from '../../libs/shared/runtime/index.js'

exitIfNodeTooOld('wire') // before the first start's database work (runUntilSignal checks again, for the other roles)

const cfg = loadConfigOrExit()
// WIRE_NETWORK_BOARDS: a whole network in this process; its roles' settings are checked before any database work
const roles = cfg.network.boards > 0 ? (await import('./network-config.js')).networkConfigsOrExit() : null
const embedded = cfg.db.kind === 'embedded' ? cfg.db : null
// the board's one process holds a read side too; a first start on the embedded database creates
// it once the process runs with its flags, then runs itself again without initdb's memory
const tuning = await tuneProcess(cfg, {
  readSide: true,
  ...(embedded && {
    prepare: async () =>
      (await import('./first-start.js')).createEmbeddedDatabaseFirst(embedded, (line) =>
        process.stderr.write(`${line}
`),
      ),
  }),
})
// loaded only now: a process that runs itself again has not loaded them for nothing
const [{ runUntilSignal }, { createLogger }, { inCheckout }, { startBoard }, { welcome, networkWelcome }, network] = await Promise.all([
  import('../../libs/shared/lifecycle.js'),
  import('../../libs/shared/log/index.js'),
  import('../../libs/shared/paths.js'),
  import('./app.js'),
  import('./welcome.js'),
  roles ? import('./network.js') : null,
])
const log = createLogger('server', cfg.logLevel)
await runUntilSignal(
  log,
  async () => {
    if (roles && network) {
      // the identity network, the boards and an aggregator, each on its own port
      const net = await network.startNetwork(roles, log)
      log.info(
        { identity: net.identity.url, aggregator: net.aggregator.url, boards: net.boards.map((b) => b.url), database: cfg.db.kind },
        'wire network ready',
      )
      process.stdout.write(networkWelcome(net, cfg))
      tuning.afterStart()
      return () => net.close()
    }
    const board = await startBoard(cfg, log)
    const address = await board.app
      .listen({ host: cfg.host, port: cfg.port, backlog: cfg.http.listenBacklog })
      .catch(async (err: unknown) => {
        await board.close()
        throw err
      })
    log.info(
      { address, database: cfg.db.kind, bus: cfg.redisUrl && cfg.db.kind === 'postgres' ? 'redis' : 'in-process' },
      'wire board ready',
    )
    process.stdout.write(welcome(cfg, address, (await board.reader.readSide.board.meta()).name, inCheckout()))
    tuning.afterStart()
    return () => board.close() // long-polls answered, publishes committed, sweeper stopped; then the database (PGlite flushes)
  },
  { databaseUrl: cfg.db.kind === 'postgres' ? cfg.db.url : undefined },
)
tuning.stop()
