import type { FastifyInstance } from 'fastify'
import { registry } from '../metrics/index.js'

export interface HealthOptions {
  /** Resolves true when this process can serve its role (database reachable, not stopping). */
  ready: () => Promise<{ ok: boolean; [k: string]: unknown }>
}

/** `GET /` and `/healthz` (liveness), `/readyz` (readiness for orchestrators) and `/metrics` (Prometheus). */
export async function healthRoutes(app: FastifyInstance, opts: HealthOptions) {
  app.get('/', async () => ({ name: 'wire', status: 'live' }))
  app.get('/healthz', async () => ({ ok: true }))
  app.get('/readyz', async (_req, reply) => {
    const r = await opts.ready().catch(() => ({ ok: false }))
    return reply.code(r.ok ? 200 : 503).send(r)
  })
  app.get('/metrics', async (_req, reply) => reply.type(registry.contentType).send(await registry.metrics()))
}
