import { execFile } from 'node:child_process'
import { createConnection, createServer, type Socket } from 'node:net'
import { promisify } from 'node:util'
import pg from 'pg'
import type { Test } from 'tap'
import { projectPath } from '../../libs/shared/paths.js'
import { freePort, startProcess, type Proc } from './process.js'
import { dropSchema, TEST_DATABASE_URL, uniqueSchema } from './services.js'
import { until } from './wait.js'

// The fleet's real parts on one machine: a streaming replica (scripts/replica.sh), a private
// Redis that a test may stop and start, a TCP proxy in front of the primary that a test may cut,
// and the roles as child processes of the built code (dist/).

const run = promisify(execFile)
const withPort = (url: string, port: number) => {
  const u = new URL(url)
  u.port = String(port)
  return u.toString()
}

export interface Replica {
  url: string
  query<R = Record<string, unknown>>(sql: string): Promise<R[]>
  pause(): Promise<void>
  resume(): Promise<void>
  stop(): Promise<void>
}

export async function startReplica(t: Test): Promise<Replica> {
  const port = await freePort()
  const started = run(projectPath('scripts/replica.sh'), ['start', String(port)])
  const url = withPort(TEST_DATABASE_URL, port)
  let stopped = false
  const stop = async () => {
    if (stopped) return
    stopped = true
    await run(projectPath('scripts/replica.sh'), ['stop', String(port)])
  }
  // registered before the start finishes: a test that fails meanwhile (a role started beside it exits)
  // still stops the replica and drops its slot, which would otherwise hold the primary's WAL
  t.teardown(async () => {
    await started.catch(() => {})
    await stop()
  })
  await started
  const query = async <R>(sql: string) => {
    const c = new pg.Client({ connectionString: url })
    await c.connect()
    try {
      return (await c.query(sql)).rows as R[]
    } finally {
      await c.end()
    }
  }
  return {
    url,
    query,
    pause: async () => void (await query('select pg_wal_replay_pause()')),
    resume: async () => void (await query('select pg_wal_replay_resume()')),
    stop,
  }
}

export interface PrivateRedis {
  url: string
  stop(): Promise<void>
  start(): Promise<void>
}

/** A Redis of the test's own on a spare port, so stopping it touches no other test. */
export async function startRedis(t: Test): Promise<PrivateRedis> {
  const port = await freePort()
  let proc: Proc | null = null
  const start = async () => {
    proc = await startProcess(
      t,
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      process.env,
      /Ready to accept connections/,
      10_000,
    )
  }
  const stop = async () => {
    if (!proc) return
    proc.signal('SIGKILL')
    await proc.exited
    proc = null
  }
  await start()
  return { url: `redis://127.0.0.1:${port}`, start, stop }
}

export interface Proxy {
  port: number
  url: string
  /** Refuses new connections and drops open ones: the primary is "down" for whoever uses this URL. */
  cut(): void
  restore(): void
}

export async function tcpProxy(t: Test, targetUrl = TEST_DATABASE_URL): Promise<Proxy> {
  const target = new URL(targetUrl)
  const open = new Set<Socket>()
  let down = false
  const server = createServer((client) => {
    if (down) return client.destroy()
    const upstream = createConnection(Number(target.port || 5432), target.hostname)
    open.add(client).add(upstream)
    const drop = () => (client.destroy(), upstream.destroy(), open.delete(client), open.delete(upstream))
    client.on('error', drop).on('close', drop)
    upstream.on('error', drop).on('close', drop)
    client.pipe(upstream).pipe(client)
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const port = (server.address() as { port: number }).port
  t.teardown(() => {
    for (const s of open) s.destroy()
    return new Promise<void>((r) => server.close(() => r()))
  })
  return {
    port,
    url: withPort(targetUrl, port),
    cut: () => {
      down = true
      for (const s of open) s.destroy()
      open.clear()
    },
    restore: () => void (down = false),
  }
}

export interface Role {
  url: string
  proc: Proc
  /** SIGTERM (graceful) or SIGKILL, and wait for the exit. */
  stop(sig?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

/** One role (`writer`, `reader`, `agents`, `sweeper`) as a process of the built code, ready when /readyz is. */
export async function startRole(t: Test, role: 'writer' | 'reader' | 'agents' | 'sweeper', env: Record<string, string>): Promise<Role> {
  const port = await freePort()
  const proc = await startProcess(
    t,
    projectPath('node_modules/.bin/node'),
    [projectPath(`dist/apps/${role}/main.js`)],
    // no shedding on event-loop delay unless the test sets it (as startStack: test/helpers/stack.ts)
    {
      ...process.env,
      LOG_LEVEL: 'info',
      SERVER_PORT: String(port),
      SERVER_HOST: '127.0.0.1',
      WIRE_CONFIG: '/nonexistent/board.json',
      SHED_EVENT_LOOP_DELAY_MS: '0',
      ...env,
    },
    /Server listening/,
    30_000,
  )
  const url = `http://127.0.0.1:${port}`
  for (
    let i = 0;
    i < 100 &&
    (await fetch(`${url}/readyz`).then(
      (r) => r.status,
      () => 0,
    )) !== 200;
    i++
  )
    await new Promise((r) => setTimeout(r, 100))
  return {
    url,
    proc,
    stop: async (sig = 'SIGTERM') => {
      proc.signal(sig)
      return proc.exited
    },
  }
}

/** A fresh schema for a fleet test, migrated by the first writer and dropped at the end. */
export function fleetSchema(t: Test): string {
  const schema = uniqueSchema('fleet')
  t.teardown(() => dropSchema(schema))
  return schema
}

export const json = async (url: string, init?: RequestInit): Promise<any> => (await fetch(url, init)).json()

export const publish = (writer: Role, body: unknown, token = 'fleet-agent-token') =>
  fetch(`${writer.url}/sw/signals`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })

/** A role's unlabelled metric as it exports it now (`wire_waiting_pollers`, `wire_replica_lag_signals`, …); 0 when absent. */
export async function metricOf(r: Role, name: string): Promise<number> {
  const text = await (await fetch(`${r.url}/metrics`)).text()
  const line = text.split('\n').find((l) => l.startsWith(`${name} `))
  return line === undefined ? 0 : Number(line.slice(name.length + 1))
}

/** Resolves once `r` holds `n` waiting long-polls (a test's poll has registered, so what it publishes next wakes it). */
export const untilWaiting = (r: Role, n: number, ms = 10_000) =>
  until(async () => (await json(`${r.url}/readyz`)).waiting === n, ms, `${n} long-poll(s) waiting on ${r.url}`)
