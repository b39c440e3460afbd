import { loadConfigOrExit } from '../../libs/shared/config/index.js'
import { openInfra } from '../../libs/shared/infra/index.js'
import { runUntilSignal } from '../../libs/shared/lifecycle.js'
import { createLogger } from '../../libs/shared/log/index.js'
import { buildReader } from './app.js'
import { createReaderContext } from './context.js'

const cfg = loadConfigOrExit()
const log = createLogger('reader', cfg.logLevel)
await runUntilSignal(log, async () => {
  const infra = await openInfra(cfg, log, { replica: true }) // readers never migrate
  const ctx = await createReaderContext(cfg, log, infra)
  const app = buildReader(ctx)
  await app.listen({ host: cfg.host, port: cfg.port })
  return async () => {
    await app.close() // preClose: every waiting long-poll is answered now
    await infra.close()
  }
})
