import type { FastifyInstance } from 'fastify'
import type { Config } from '../../libs/shared/config/index.js'
import { createHttpApp, healthRoutes } from '../../libs/shared/http/index.js'
import type { Infra } from '../../libs/shared/infra/index.js'
import type { Logger } from '../../libs/shared/log/index.js'
import { readerRoutes } from '../reader/app.js'
import { createReaderContext, type ReaderContext, type ReaderOptions } from '../reader/context.js'
import { writerRoutes } from '../writer/app.js'
import { createWriterContext, type WriterContext, type WriterOptions } from '../writer/context.js'

export interface Board {
  app: FastifyInstance
  writer: WriterContext
  reader: ReaderContext
}

/**
 * Every role in one process on one port (`npm start`): the writer's and the reader's routes on
 * one fastify instance over one database. The fleet runs the same pieces as separate processes.
 */
export async function buildBoard(
  cfg: Config,
  log: Logger,
  infra: Infra,
  opts: { writer?: WriterOptions; reader?: ReaderOptions } = {},
): Promise<Board> {
  const reader = await createReaderContext(cfg, log, infra, opts.reader)
  const writer = await createWriterContext(cfg, log, infra, { ...opts.writer, onCommit: (head) => reader.feed.noteHead(head) })
  const app = createHttpApp(log)
  app.register(healthRoutes, {
    ready: async () => {
      const [w, r] = await Promise.all([writer.ready(), reader.ready()])
      return { ...r, ok: w.ok && r.ok }
    },
  })
  app.register(writerRoutes, { ctx: writer, presence: infra.presence })
  app.register(readerRoutes, { ctx: reader })
  return { app, writer, reader }
}
