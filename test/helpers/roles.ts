import { readerContext, type ReaderContext } from '../../apps/reader/context.js'
import { createWriterContext, type WriterContext } from '../../apps/writer/context.js'
import type { Config } from '../../libs/shared/config/index.js'
import { createAppContext, type AppContext, type Infra, type Overrides } from '../../libs/shared/context/index.js'
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

export async function readerOn(cfg: Config, log: Logger, infra: Infra, overrides: Omit<Overrides, 'infra'> = {}): Promise<ReaderContext & { root: AppContext }> {
  const root = await createAppContext(cfg, log, { roles: ['reader'], overrides: { ...overrides, infra } })
  const ctx = readerContext(root)
  return { ...ctx, root, close: async () => (await ctx.close(), await root.close()) }
}
