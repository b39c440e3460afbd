import { agentRoutes } from '../../apps/agents/app.js'
import { agentsContext } from '../../apps/agents/context.js'
import { readerContext, type ReaderContext } from '../../apps/reader/context.js'
import { createWriterContext, type WriterContext } from '../../apps/writer/context.js'
import type { Config } from '../../libs/shared/config/index.js'
import { createAppContext, type AppContext, type Infra, type Overrides } from '../../libs/shared/context/index.js'
import { createHttpApp } from '../../libs/shared/http/index.js'
import type { Logger } from '../../libs/shared/log/index.js'

/**
 * A role's view built from the one root on connections a test holds (a second writer or reader in
 * the same process, as a second process would be): the root closes what it built, never `infra`.
 */
export async function writerOn(cfg: Config, log: Logger, infra: Infra): Promise<WriterContext & { root: AppContext }> {
  const root = await createAppContext(cfg, log, { roles: ['writer'], overrides: { infra } })
  const ctx = await createWriterContext(root).catch(async (err: unknown) => {
    await root.close()
    throw err
  })
  return { ...ctx, root, close: async () => (await ctx.close(), await root.close()) }
}

export async function readerOn(
  cfg: Config,
  log: Logger,
  infra: Infra,
  overrides: Omit<Overrides, 'infra'> = {},
): Promise<ReaderContext & { root: AppContext }> {
  const root = await createAppContext(cfg, log, { roles: ['reader'], overrides: { ...overrides, infra } })
  const ctx = readerContext(root)
  return { ...ctx, root, close: async () => (await ctx.close(), await root.close()) }
}

/** The agents surfaces (MCP, A2A) on their own root and app, on connections a test holds (a second agents process). */
export async function agentsOn(cfg: Config, log: Logger, infra: Infra, overrides: Omit<Overrides, 'infra'> = {}) {
  const root = await createAppContext(cfg, log, { roles: ['agents'], overrides: { ...overrides, infra } })
  const ctx = agentsContext(root)
  const app = createHttpApp(log, cfg.http, root.infra.limits)
  await app.register(agentRoutes, { ctx })
  await app.ready()
  return { ctx, app, root, close: async () => (await app.close(), await root.close()) }
}
