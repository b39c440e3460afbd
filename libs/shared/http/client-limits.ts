import type { FastifyInstance } from 'fastify'

/** What the hooks need from libs/shared/limits' clientLimits (structural, so http needs no limits import). */
export interface ReadLimiter {
  readsLimited: boolean
  pollsLimited: boolean
  read(address: string): Promise<void>
  openPoll(address: string): Promise<() => void>
}

/** A request that may wait: `wait` present and above zero (the handler still validates it). */
function waits(query: unknown): boolean {
  const w = (query as { wait?: unknown } | null)?.wait
  const v = Array.isArray(w) ? w[w.length - 1] : w
  return typeof v === 'string' && v.length <= 32 && Number(v) > 0
}

/**
 * Per-client-address read budgets on `app`'s routes and on plugins it registers afterwards: every GET
 * takes a read (429 rate_limited + Retry-After past the budget), and a long-poll holds one of the
 * address's long-poll slots until its answer is sent or its connection closes. The address is
 * req.ip, which TRUST_PROXY decides.
 */
export function installReadLimits(app: FastifyInstance, limits: ReadLimiter) {
  if (!limits.readsLimited && !limits.pollsLimited) return
  app.addHook('onRequest', async (req, reply) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return
    await limits.read(req.ip)
    if (!limits.pollsLimited || !waits(req.query)) return
    const release = await limits.openPoll(req.ip)
    reply.raw.once('close', release)
  })
}
