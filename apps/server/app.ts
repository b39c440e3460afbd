import type { FastifyInstance } from 'fastify'
import { agentRoutes } from '../agents/app.js'
import { agentsContext, type AgentsContext } from '../agents/context.js'
import { readerRoutes } from '../reader/app.js'
import { readerContext, type ReaderContext } from '../reader/context.js'
import { createSweeper, type Sweeper } from '../sweeper/sweeper.js'
import { writerRoutes } from '../writer/app.js'
import { createWriterContext, type WriterContext } from '../writer/context.js'
import type { Config } from '../../libs/shared/config/index.js'
import { closeOnFailure, createAppContext, type AppContext, type Overrides } from '../../libs/shared/context/index.js'
import { createHttpApp, healthRoutes } from '../../libs/shared/http/index.js'
import type { StartedApp } from '../../libs/shared/lifecycle.js'
import type { Logger } from '../../libs/shared/log/index.js'

export interface Board extends StartedApp {
  app: FastifyInstance
  root: AppContext
  writer: WriterContext
  reader: ReaderContext
  agents: AgentsContext
  /** Null when started with `sweeper: false` (tests that don't need it). */
  sweeper: Sweeper | null
}

export interface BoardOptions {
  /** Parts handed in instead of built (tests): connections already open, a smaller tail. */
  overrides?: Overrides
  sweeper?: boolean
  /** Sees every route as it is registered (tests that list what the board serves). */
  onRoute?: (route: { method: string | string[]; url: string }) => void
}

/**
 * Every role in one process on one port (`npm start`): one root serving the writer, the reader,
 * the agents and the sweeper, so their routes share one database, one identity resolver, one read
 * side and one publish path. The fleet runs the same roles as separate processes.
 */
export async function startBoard(cfg: Config, log: Logger, opts: BoardOptions = {}): Promise<Board> {
  const sweeps = opts.sweeper !== false
  const root = await createAppContext(cfg, log, {
    roles: ['writer', 'reader', 'agents', ...(sweeps ? (['sweeper'] as const) : [])],
    overrides: opts.overrides ?? {},
  })
  return closeOnFailure(root.close, async () => {
    const reader = readerContext(root)
    const writer = await createWriterContext(root)
    const agents = agentsContext(root)
    const app = createHttpApp(log, cfg.http, root.infra.limits)
    if (opts.onRoute) app.addHook('onRoute', opts.onRoute)
    app.register(healthRoutes, {
      ready: async () => {
        const [w, r] = await Promise.all([writer.ready(), reader.ready()])
        return { ...r, ...w, ok: w.ok && r.ok }
      },
    })
    app.register(writerRoutes, { ctx: writer, presence: root.infra.presence })
    app.register(readerRoutes, { ctx: reader })
    app.register(agentRoutes, { ctx: agents })
    // the sweeper runs here too (embedded or PostgreSQL); app.close() stops it before the database closes
    const sweeper = sweeps ? await createSweeper(cfg, log, root.infra) : null
    if (sweeper) {
      root.defer(() => sweeper.stop())
      app.addHook('preClose', async () => await sweeper.stop())
    }
    await app.ready()
    return { app, root, writer, reader, agents, sweeper, close: async () => (await app.close(), await root.close()) }
  })
}
