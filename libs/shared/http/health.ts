import type { FastifyInstance } from 'fastify'
import { registry } from '../metrics/index.js'

export interface HealthOptions {
  /** Resolves true when this process can serve its role (database reachable, not stopping). */
  ready: () => Promise<{ ok: boolean; [k: string]: unknown }>
}

/** How long one readiness check answers every /readyz: the probe is public and unbudgeted, so its cost is bounded here. */
const READY_CACHE_MS = 1000
/**
 * A check not done by then answers 503 (under the 3 s probe timeout of deploy/k8s): a database
 * whose link stalled would otherwise hold every probe until its statement's own deadline.
 */
export const READY_DEADLINE_MS = 2000

/** `GET /` and `/healthz` (liveness), `/readyz` (readiness for orchestrators) and `/metrics` (Prometheus). */
export async function healthRoutes(app: FastifyInstance, opts: HealthOptions) {
  let last: { at: number; check: Promise<{ ok: boolean; [k: string]: unknown }> } | null = null
  const ready = () => {
    if (last && Date.now() - last.at < READY_CACHE_MS) return last.check
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<{ ok: boolean; reason: string }>(
      (r) => (timer = setTimeout(() => r({ ok: false, reason: `not ready within ${READY_DEADLINE_MS} ms` }), READY_DEADLINE_MS)),
    )
    const check = Promise.race([opts.ready().catch(() => ({ ok: false })), late]).finally(() => clearTimeout(timer))
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
