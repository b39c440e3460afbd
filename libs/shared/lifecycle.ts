import { databaseHint } from './database-hint.js'
import type { Logger } from './log/index.js'
import { exitIfNodeTooOld } from './runtime/index.js'

/**
 * Starts a process, waits for SIGTERM or SIGINT, then stops it. A second signal or the grace
 * timer forces exit 1; otherwise the event loop drains and the exit code is 0. `databaseUrl`
 * (DATABASE_URL) lets a start that failed on it say so in one line.
 */
/** How long a stopping process lets its work end before it exits anyway (Kubernetes' and systemd's grace must be longer). */
export const SHUTDOWN_GRACE_MS = 30_000

export async function runUntilSignal(log: Logger, start: () => Promise<() => Promise<void>>, opts: { databaseUrl?: string } = {}) {
  exitIfNodeTooOld('wire') // `node dist/apps/<role>/main.js` run by hand; `wire-server` checked before loading anything
  const first = new Promise<NodeJS.Signals>((r) => {
    process.once('SIGTERM', r)
    process.once('SIGINT', r)
  })
  let stop: () => Promise<void>
  try {
    stop = await start()
  } catch (err) {
    const hint = startHint(err) ?? (opts.databaseUrl ? databaseHint(err, opts.databaseUrl) : null)
    if (hint) process.stderr.write(`wire: ${hint}\n`)
    else log.fatal({ err }, 'failed to start')
    process.exitCode = 1
    setTimeout(() => process.exit(1), 200).unref()
    return
  }
  const sig = await first
  log.info({ sig }, 'stopping')
  for (const s of ['SIGTERM', 'SIGINT'] as const) process.on(s, () => process.exit(1))
  setTimeout(() => {
    log.error('shutdown timed out')
    process.exit(1)
  }, SHUTDOWN_GRACE_MS).unref()
  try {
    await stop()
    log.info('stopped')
  } catch (err) {
    log.error({ err }, 'error while stopping')
    process.exitCode = 1
  }
}

/** A started app: its HTTP server (not listening yet) and how to stop it and release what it holds. */
export interface StartedApp {
  readonly app: { listen(o: { host: string; port: number; backlog: number }): Promise<string>; close(): Promise<unknown> }
  close(): Promise<void>
}

/** A role's main: start it, listen on SERVER_HOST:SERVER_PORT (with HTTP_LISTEN_BACKLOG), and stop it on SIGTERM or SIGINT. */
export function serveUntilSignal(
  log: Logger,
  where: { host: string; port: number; http: { listenBacklog: number }; db?: { kind: string; url?: string } | null },
  start: () => Promise<StartedApp>,
) {
  return runUntilSignal(
    log,
    async () => {
      const started = await start()
      try {
        log.info(
          { address: await started.app.listen({ host: where.host, port: where.port, backlog: where.http.listenBacklog }) },
          'listening',
        ) // a fresh object: fastify writes into it
      } catch (err) {
        await started.close()
        throw err
      }
      return () => started.close()
    },
    { databaseUrl: where.db?.kind === 'postgres' ? where.db.url : undefined },
  )
}

/** A start failure the operator fixes with one setting gets one line naming it, not a stack trace. */
function startHint(err: unknown): string | null {
  // `setting`: the one that chose the port, where it is not SERVER_PORT (a network in one process)
  const e = err as { code?: unknown; port?: unknown; address?: unknown; setting?: unknown } | null
  if (e?.code === 'EADDRINUSE')
    return `port ${String(e.port ?? '')} on ${String(e.address ?? '')} is already in use: stop the other process or set ${String(e.setting ?? 'SERVER_PORT')} to a free port`
  if (e?.code === 'EWIRE_DATA_DIR_BUSY') return (err as Error).message
  if (e?.code === 'EACCES' && e.port !== undefined)
    return `no permission to listen on port ${String(e.port)}: set SERVER_PORT to a port above 1023`
  return null
}
