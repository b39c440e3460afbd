import type { FastifyInstance } from 'fastify'
import type { Test } from 'tap'
import { startReader } from '../../apps/reader/app.js'
import { startWriter } from '../../apps/writer/app.js'
import { createLogger } from '../../libs/shared/log/index.js'
import type { Stack } from '../helpers/stack.js'

/**
 * Another writer on the stack's database and Redis: its own pools, its own batcher and limits, as
 * a second writer process has (test/fleet runs them as real processes; this is the cheap twin).
 */
export async function secondWriter(t: Test, s: Stack): Promise<FastifyInstance> {
  const { app, close } = await startWriter(s.cfg, createLogger('writer', 'silent'))
  t.teardown(close)
  return app
}

/** Another reader on the stack's database and Redis (its own tail, waiters and limits), as a second reader process. */
export async function secondReader(t: Test, s: Stack): Promise<FastifyInstance> {
  const { app, close } = await startReader(s.cfg, createLogger('reader', 'silent'))
  t.teardown(close)
  return app
}
