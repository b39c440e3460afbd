import { loadConfig } from '../../libs/shared/config/index.js'
import { openInfra } from '../../libs/shared/infra/index.js'
import { runUntilSignal } from '../../libs/shared/lifecycle.js'
import { createLogger } from '../../libs/shared/log/index.js'
import { buildWriter } from './app.js'
import { createWriterContext } from './context.js'

const cfg = loadConfig()
const log = createLogger('writer', cfg.logLevel)
await runUntilSignal(log, async () => {
  const infra = await openInfra(cfg, log, { migrate: cfg.autoMigrate })
  const ctx = await createWriterContext(cfg, log, infra)
  const app = buildWriter(ctx, infra.presence)
  await app.listen({ host: cfg.host, port: cfg.port })
  return async () => {
    await app.close() // preClose: in-flight publishes commit first
    await infra.close()
  }
})
