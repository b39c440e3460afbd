import type { FastifyInstance } from 'fastify'
import type { Test } from 'tap'
import { startReader } from '../../apps/reader/app.js'
import { startWriter } from '../../apps/writer/app.js'
import { createLogger } from '../../libs/shared/log/index.js'
import type { Infra } from '../../libs/shared/context/index.js'
import type { Stack } from '../helpers/stack.js'
import { until } from '../helpers/wait.js'

const redisReady = (infra: Infra) => until(() => !infra.redis || infra.redis.status === 'ready', 5000, 'Redis to be ready')

/**
 * Another writer on the stack's database and Redis: its own pools, its own batcher and limits, as
 * a second writer process has (test/fleet runs them as real processes; this is the cheap twin).
 */
export async function secondWriter(t: Test, s: Stack): Promise<FastifyInstance> {
  const { app, close, root } = await startWriter(s.cfg, createLogger('writer', 'silent'))
  t.teardown(close)
  await redisReady(root.infra) // its limits are shared from the first request on, not counted locally while Redis connects
  return app
}

/** Another reader on the stack's database and Redis (its own tail, waiters and limits), as a second reader process. */
export async function secondReader(t: Test, s: Stack): Promise<FastifyInstance> {
  const { app, close, root } = await startReader(s.cfg, createLogger('reader', 'silent'))
  t.teardown(close)
  await redisReady(root.infra)
  return app
}
