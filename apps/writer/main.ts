import { loadConfigOrExit } from '../../libs/shared/config/index.js'
import { createReadSide } from '../../libs/shared/feed/index.js'
import { openInfra } from '../../libs/shared/infra/index.js'
import { runUntilSignal } from '../../libs/shared/lifecycle.js'
import { createLogger } from '../../libs/shared/log/index.js'
import { buildWriter } from './app.js'
import { createWriterContext } from './context.js'

const cfg = loadConfigOrExit()
const log = createLogger('writer', cfg.logLevel)
await runUntilSignal(log, async () => {
  const infra = await openInfra(cfg, log, { migrate: cfg.autoMigrate })
  // MCP and A2A read too: a feed of their own on the primary (a small tail; most reads go to readers)
  const reads = await createReadSide(cfg, log, infra, infra.primary, { tailSize: 1000 })
  const ctx = await createWriterContext(cfg, log, infra, {
    onCommit: (head) => reads.feed.noteHead(head),
    onInvalidate: (m) => reads.feed.invalidate(m),
  })
  const app = buildWriter(ctx, infra.presence, reads)
  await app.listen({ host: cfg.host, port: cfg.port })
  return async () => {
    await app.close() // preClose: in-flight publishes commit first
    await infra.close()
  }
})
