import { execFile } from 'node:child_process'
import { createConnection, createServer, type Socket } from 'node:net'
import { promisify } from 'node:util'
import pg from 'pg'
import { projectPath } from '../../libs/shared/paths.js'

// A PostgreSQL primary and a streaming standby of its own on this machine (scripts/cluster.sh,
// scripts/replica.sh), and a TCP switch in front of them where DNS or a pooler stands in production.
// Everything made here is undone by the Cleanup it was given, newest first.

const run = promisify(execFile)

/** Undo steps, run newest first (a test's teardown, a benchmark's finally). */
export class Cleanup {
  private readonly steps: Array<() => Promise<unknown> | unknown> = []
  add(step: () => Promise<unknown> | unknown) {
    this.steps.push(step)
  }
  async run() {
    for (const step of this.steps.splice(0).reverse())
      await Promise.resolve()
        .then(step)
        .catch(() => {})
  }
}

export const pgUrl = (port: number, db = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${db}`

export async function sql<R = Record<string, unknown>>(url: string, text: string): Promise<R[]> {
  const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 })
  c.on('error', () => {})
  await c.connect()
  try {
    return (await c.query(text)).rows as R[]
  } finally {
    await c.end().catch(() => {})
  }
}

export interface Primary {
  port: number
  url: string
  /** `pg_ctl stop -m immediate`: the primary is gone as in a crash. */
  kill(): Promise<void>
}

/** A fresh primary (initdb) on `port`; `sync`: every commit waits for one standby. */
export async function startPrimary(cleanup: Cleanup, port: number, mode: 'sync' | 'async'): Promise<Primary> {
  const script = projectPath('scripts/cluster.sh')
  cleanup.add(() => run(script, ['stop', String(port)]))
  await run(script, ['start', String(port), `/tmp/wire-cluster-${port}`, mode])
  return { port, url: pgUrl(port), kill: async () => void (await run(script, ['kill', String(port)])) }
}

export interface Standby {
  port: number
  url: string
  /** `pg_ctl promote`, waiting until it accepts writes. */
  promote(): Promise<void>
}

/** A hot standby streaming from `upstreamPort` (the primary, or a switch in front of it). */
export async function startStandby(cleanup: Cleanup, port: number, upstreamPort: number): Promise<Standby> {
  const script = projectPath('scripts/replica.sh')
  const env = { ...process.env, PRIMARY_PORT: String(upstreamPort) }
  cleanup.add(() => run(script, ['stop', String(port)], { env }))
  await run(script, ['start', String(port)], { env })
  return { port, url: pgUrl(port), promote: async () => void (await run(script, ['promote', String(port)], { env })) }
}

export interface Switch {
  port: number
  /** Sends new connections to `port` and drops the open ones (clients reconnect through it). */
  point(port: number): void
  /** Refuses new connections and drops the open ones. */
  cut(): void
}

/** A TCP endpoint forwarding to `target` on 127.0.0.1, repointed by the caller. */
export async function tcpSwitch(cleanup: Cleanup, listenPort: number, target: number): Promise<Switch> {
  const open = new Set<Socket>()
  let to: number | null = target
  const dropAll = () => {
    for (const s of open) s.destroy()
    open.clear()
  }
  const server = createServer((client) => {
    if (to === null) return client.destroy()
    const upstream = createConnection(to, '127.0.0.1')
    open.add(client).add(upstream)
    const drop = () => (client.destroy(), upstream.destroy(), open.delete(client), open.delete(upstream))
    client.on('error', drop).on('close', drop)
    upstream.on('error', drop).on('close', drop)
    client.pipe(upstream).pipe(client)
  })
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(listenPort, '127.0.0.1', resolve))
  cleanup.add(() => (dropAll(), new Promise<void>((r) => server.close(() => r()))))
  return {
    port: listenPort,
    point: (port) => ((to = port), dropAll()),
    cut: () => ((to = null), dropAll()),
  }
}
