import type { FastifyInstance } from 'fastify'
import { agentRoutes } from '../agents/app.js'
import { createAgentsContext, type AgentsContext } from '../agents/context.js'
import { readerRoutes } from '../reader/app.js'
import { createReaderContext, type ReaderContext, type ReaderOptions } from '../reader/context.js'
import { createSweeper, type Sweeper } from '../sweeper/sweeper.js'
import { writerRoutes } from '../writer/app.js'
import { createWriterContext, type WriterContext, type WriterOptions } from '../writer/context.js'
import { networkIdentity } from '../../libs/shared/auth/index.js'
import type { Config } from '../../libs/shared/config/index.js'
import { createHttpApp, healthRoutes } from '../../libs/shared/http/index.js'
import { openInfra, type Infra } from '../../libs/shared/infra/index.js'
import type { StartedApp } from '../../libs/shared/lifecycle.js'
import type { Logger } from '../../libs/shared/log/index.js'

export interface Board extends StartedApp {
  app: FastifyInstance
  infra: Infra
  writer: WriterContext
  reader: ReaderContext
  agents: AgentsContext
  /** Null when started with `sweeper: false` (tests that don't need it). */
  sweeper: Sweeper | null
}

export interface BoardOptions {
  writer?: WriterOptions
  reader?: ReaderOptions
  sweeper?: boolean
  /** Connections already open (tests that seed the database first); otherwise opened here, migrating. */
  infra?: Infra
  /** Sees every route as it is registered (tests that list what the board serves). */
  onRoute?: (route: { method: string | string[]; url: string }) => void
}

/**
 * Every role in one process on one port (`npm start`): the writer's, the reader's and the agents'
 * routes on one fastify instance over one database, one read side and one publish path. The fleet
 * runs the same pieces as separate processes.
 */
export async function startBoard(cfg: Config, log: Logger, opts: BoardOptions = {}): Promise<Board> {
  const infra = opts.infra ?? (await openInfra(cfg, log, { migrate: cfg.autoMigrate }))
  try {
    // network mode: one verify cache per process, so a token a publish verified counts at once on reads
    const identity = cfg.identity.mode === 'network' ? networkIdentity({ url: cfg.identity.url, authority: cfg.authority, log }) : undefined
    const reader = await createReaderContext(cfg, log, infra, { ...opts.reader, ...(identity && { identity }) })
    const writer = await createWriterContext(cfg, log, infra, {
      ...opts.writer,
      ...(identity && { identity }),
    })
    const agents = await createAgentsContext(cfg, log, infra, {
      shared: { readSide: reader.readSide, publish: writer.publisher.deps, identity: writer.identity },
    })
    const app = createHttpApp(log, cfg.http, infra.limits)
    if (opts.onRoute) app.addHook('onRoute', opts.onRoute)
    app.register(healthRoutes, {
      ready: async () => {
        const [w, r] = await Promise.all([writer.ready(), reader.ready()])
        return { ...r, ...w, ok: w.ok && r.ok }
      },
    })
    app.register(writerRoutes, { ctx: writer, presence: infra.presence })
    app.register(readerRoutes, { ctx: reader })
    app.register(agentRoutes, { ctx: agents })
    // the sweeper runs here too (embedded or PostgreSQL); app.close() stops it before the database closes
    const sweeper = opts.sweeper === false ? null : await createSweeper(cfg, log, infra)
    if (sweeper) app.addHook('preClose', async () => await sweeper.stop())
    await app.ready()
    return { app, infra, writer, reader, agents, sweeper, close: async () => (await app.close(), await infra.close()) }
  } catch (err) {
    if (!opts.infra) await infra.close()
    throw err
  }
}
