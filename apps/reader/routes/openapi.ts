import type { FastifyInstance } from 'fastify'
import { BOARD_API, openApiDocument } from '../../../libs/shared/api/index.js'
import type { ReaderContext } from '../context.js'

/** GET /sw/openapi.json: the OpenAPI 3.1 document, generated once from the routes' zod schemas. */
export async function openApiRoutes(app: FastifyInstance, { ctx }: { ctx: ReaderContext }) {
  const text = JSON.stringify(
    openApiDocument(BOARD_API, { baseUrl: ctx.cfg.baseUrl, title: `Wire board sw://${ctx.cfg.authority}`, version: '1' }),
  )
  app.get('/openapi.json', async (_req, reply) =>
    reply.header('cache-control', 'public, max-age=300').type('application/json; charset=utf-8').send(text),
  )
}
