import type { FastifyInstance } from 'fastify'
import type { Test } from 'tap'
import { buildReader } from '../../apps/reader/app.js'
import { createReaderContext } from '../../apps/reader/context.js'
import { buildWriter } from '../../apps/writer/app.js'
import { createWriterContext, type WriterOptions } from '../../apps/writer/context.js'
import { openInfra } from '../../libs/shared/infra/index.js'
import { createLogger } from '../../libs/shared/log/index.js'
import type { Stack } from '../helpers/stack.js'

/**
 * Another writer on the stack's database and Redis: its own pools, its own batcher and limits, as
 * a second writer process has (test/fleet runs them as real processes; this is the cheap twin).
 */
export async function secondWriter(t: Test, s: Stack, opts: WriterOptions = {}): Promise<FastifyInstance> {
  const log = createLogger('writer', 'silent')
  const infra = await openInfra(s.cfg, log)
  const ctx = await createWriterContext(s.cfg, log, infra, opts)
  const app = buildWriter(ctx, infra.presence)
  await app.ready()
  t.teardown(async () => {
    await app.close()
    await infra.close()
  })
  return app
}

/** Another reader on the stack's database and Redis (its own tail, waiters and limits), as a second reader process. */
export async function secondReader(t: Test, s: Stack): Promise<FastifyInstance> {
  const log = createLogger('reader', 'silent')
  const infra = await openInfra(s.cfg, log)
  const ctx = await createReaderContext(s.cfg, log, infra)
  const app = buildReader(ctx)
  await app.ready()
  t.teardown(async () => {
    await app.close()
    await infra.close()
  })
  return app
}
