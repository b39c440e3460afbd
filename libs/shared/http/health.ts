import type { FastifyInstance } from 'fastify'
import { registry } from '../metrics/index.js'

export interface HealthOptions {
  /** Resolves true when this process can serve its role (database reachable, not stopping). */
  ready: () => Promise<{ ok: boolean; [k: string]: unknown }>
}

/** How long one readiness check answers every /readyz: the probe is public and unbudgeted, so its cost is bounded here. */
const READY_CACHE_MS = 1000

/** `GET /` and `/healthz` (liveness), `/readyz` (readiness for orchestrators) and `/metrics` (Prometheus). */
export async function healthRoutes(app: FastifyInstance, opts: HealthOptions) {
  let last: { at: number; check: Promise<{ ok: boolean; [k: string]: unknown }> } | null = null
  const ready = () => {
    if (last && Date.now() - last.at < READY_CACHE_MS) return last.check
    const check = opts.ready().catch(() => ({ ok: false }))
    last = { at: Date.now(), check }
    return check
  }
  app.get('/', async () => ({ name: 'wire', status: 'live' }))
  app.get('/healthz', async () => ({ ok: true }))
  app.get('/readyz', async (_req, reply) => {
    const r = await ready()
    return reply.code(r.ok ? 200 : 503).send(r)
  })
  app.get('/metrics', async (_req, reply) => reply.type(registry.contentType).send(await registry.metrics()))
}
