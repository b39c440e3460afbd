import type { FastifyInstance } from 'fastify'
import { openApiDocument } from '../../../libs/shared/api/index.js'
import type { AggregatorContext } from '../context.js'
import { AGGREGATOR_API } from './api.js'

/** The aggregator's discovery document, what it is and where its API lives, and its OpenAPI document, generated from its route table. */
export async function discoveryRoutes(app: FastifyInstance, { ctx }: { ctx: AggregatorContext }) {
  const base = ctx.cfg.baseUrl
  const doc = {
    protocol: 'wire',
    version: '1',
    role: 'aggregator',
    registry: `${base}/registry/boards`,
    search: `${base}/search/signals`,
    proxy: `${base}/sw/{address}`,
    mcp: `${base}/mcp`,
    openapi: `${base}/openapi.json`,
    features: ['registry', 'proxy', 'search', 'mcp'],
  }
  app.get('/.well-known/wire-aggregator', async () => doc)
  const openapi = openApiDocument(AGGREGATOR_API, { baseUrl: base, title: 'Wire aggregator', version: '1' })
  app.get('/openapi.json', async () => openapi)
}
