import type { FastifyInstance } from 'fastify'
import { networkIdentity } from '../../libs/shared/auth/index.js'
import type { Config } from '../../libs/shared/config/index.js'
import { createHttpApp, healthRoutes } from '../../libs/shared/http/index.js'
import type { Infra } from '../../libs/shared/infra/index.js'
import type { Logger } from '../../libs/shared/log/index.js'
import { readerRoutes } from '../reader/app.js'
import { createReaderContext, type ReaderContext, type ReaderOptions } from '../reader/context.js'
import { writerRoutes } from '../writer/app.js'
import { createWriterContext, type WriterContext, type WriterOptions } from '../writer/context.js'
import { startSweeper, type Sweeper } from '../sweeper/sweeper.js'

export interface Board {
  app: FastifyInstance
  writer: WriterContext
  reader: ReaderContext
  /** Null when built with `sweeper: false` (tests that don't need it). */
  sweeper: Sweeper | null
}

/**
 * Every role in one process on one port (`npm start`): the writer's and the reader's routes on
 * one fastify instance over one database. The fleet runs the same pieces as separate processes.
 */
export async function buildBoard(
  cfg: Config,
  log: Logger,
  infra: Infra,
  opts: { writer?: WriterOptions; reader?: ReaderOptions; sweeper?: boolean } = {},
): Promise<Board> {
  // network mode: one verify cache per process, so a token a publish verified counts at once on reads
  const identity = cfg.identity.mode === 'network' ? networkIdentity({ url: cfg.identity.url, authority: cfg.authority, log }) : undefined
  const reader = await createReaderContext(cfg, log, infra, { ...opts.reader, ...(identity && { identity }) })
  const writer = await createWriterContext(cfg, log, infra, {
    ...opts.writer,
    ...(identity && { identity }),
    onCommit: (head) => reader.feed.noteHead(head),
    onInvalidate: (m) => reader.feed.invalidate(m), // the next read already shows an admin change
  })
  const app = createHttpApp(log, cfg.http)
  app.register(healthRoutes, {
    ready: async () => {
      const [w, r] = await Promise.all([writer.ready(), reader.ready()])
      return { ...r, ok: w.ok && r.ok }
    },
  })
  app.register(writerRoutes, { ctx: writer, presence: infra.presence, reads: reader.reads }) // MCP and A2A read through the reader's feed
  app.register(readerRoutes, { ctx: reader })
  // the sweeper runs here too (embedded or PostgreSQL); app.close() stops it before main closes the database
  const sweeper = opts.sweeper === false ? null : await startSweeper(cfg, log, infra)
  if (sweeper) app.addHook('preClose', async () => await sweeper.stop())
  return { app, writer, reader, sweeper }
}
