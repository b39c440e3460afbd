import type { Test } from 'tap'
import { projectPath } from '../../libs/shared/paths.js'
import { freePort, startProcess, type Proc } from '../helpers/process.js'
import { assertServicesUp, dropSchema, TEST_DATABASE_URL, uniqueSchema } from '../helpers/services.js'
import { ADMIN } from './support.js'

// A board and an aggregator as real processes of the built code (dist/), on PostgreSQL in schemas
// of their own, on fixed ports: a test may SIGKILL one and start it again where it was.

export interface ProcessRole {
  url: string
  /** The board's `sw://` authority (127.0.0.1:<port>). */
  authority: string
  /** SIGKILL: no shutdown, in-flight requests and transactions cut where they are. */
  kill(): Promise<void>
  /** Starts it again on the same port and schema. */
  start(): Promise<void>
  /** The running process's id. */
  pid(): number
  /** What it wrote so far. */
  output(): string
}

export async function processRole(t: Test, main: string, env: Record<string, string>, ready: RegExp, schema: string): Promise<ProcessRole> {
  await assertServicesUp()
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  const fullEnv = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/tmp',
    DATABASE_URL: TEST_DATABASE_URL,
    SERVER_ADMIN_TOKEN: ADMIN,
    SERVER_HOST: '127.0.0.1',
    SERVER_PORT: String(port),
    PUBLIC_WIRE_URL: url,
    PUBLIC_WIRE_HOST: `127.0.0.1:${port}`,
    WIRE_CONFIG: '/nonexistent/subwire.config.json',
    LOG_LEVEL: 'info',
    ...env,
  }
  let proc: Proc | null = null
  const start = async () => {
    proc = await startProcess(t, projectPath('node_modules/.bin/node'), [projectPath(main)], fullEnv, ready, 30_000)
  }
  const kill = async () => {
    const p = proc
    proc = null
    if (!p) return
    p.signal('SIGKILL')
    await p.exited
  }
  await start()
  t.teardown(async () => {
    await kill()
    await dropSchema(schema)
  })
  return { url, authority: `127.0.0.1:${port}`, kill, start, pid: () => proc!.child.pid!, output: () => proc?.output() ?? '' }
}

/** A single-process board (`dist/apps/server/main.js`) on PostgreSQL. */
export async function startBoardProcess(t: Test, env: Record<string, string> = {}): Promise<ProcessRole> {
  const schema = uniqueSchema('agpb')
  return processRole(t, 'dist/apps/server/main.js', { ...env, WIRE_PG_SCHEMA: schema }, /wire board ready/, schema)
}

/** The aggregator (`dist/apps/aggregator/main.js`), allowed to reach boards on 127.0.0.1. */
export async function startAggregatorProcess(t: Test, env: Record<string, string> = {}): Promise<ProcessRole> {
  const schema = uniqueSchema('agpa')
  return processRole(
    t,
    'dist/apps/aggregator/main.js',
    { AGGREGATOR_PG_SCHEMA: schema, AGGREGATOR_ALLOW_HOSTS: '127.0.0.1', WAKE_FALLBACK_POLL_MS: '1000', ...env },
    /"msg":"listening"/,
    schema,
  )
}
