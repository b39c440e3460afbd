import { Writable } from 'node:stream'
import type { Test } from 'tap'
import { startAggregator } from '../../apps/aggregator/app.js'
import type { AggregatorOptions } from '../../apps/aggregator/context.js'
import { startBoard, type Board } from '../../apps/server/app.js'
import { loadConfig, type Config } from '../../libs/shared/config/index.js'
import { createLogger } from '../../libs/shared/log/index.js'
import { freePort } from '../helpers/process.js'
import { assertServicesUp, dropSchema, TEST_DATABASE_URL, uniqueSchema } from '../helpers/services.js'

export const ADMIN = 'admin-secret-token'
export const TOKEN = 'aggregator-test-token'
export const auth = (token = TOKEN) => ({ authorization: `Bearer ${token}` })
/** A broadcast with `text`, published on `board` with the test token. */
export const publishOn = (board: string, text: string) =>
  fetch(`${board}/sw/signals`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...auth() },
    body: JSON.stringify({ $type: 'broadcast', text }),
  })
/** The aggregator's search for `q` finds something. */
export const searchFinds = async (agg: string, q: string) =>
  (((await (await fetch(`${agg}/search/signals?q=${q}`)).json()) as { signals?: unknown[] }).signals ?? []).length > 0

/** A log that keeps every line, for tests that check what is (not) logged. */
function memoryLog(role: 'server' | 'aggregator', lines: string[]) {
  const sink = new Writable({ write: (chunk, _e, cb) => (lines.push(String(chunk)), cb()) })
  return createLogger(role, 'debug', sink)
}

export interface TestBoard {
  url: string
  authority: string
  port: number
  schema: string
  board(): Board
  /** Stops the board (its port refuses connections until start()). */
  stop(): Promise<void>
  /** Starts it again on the same port and schema: the same board, after a restart. */
  start(): Promise<void>
}

/**
 * A single-process board on PostgreSQL (its own schema) listening on 127.0.0.1, authority `127.0.0.1:<port>`
 * (`port`: a given one, for a board reached through a link made before it).
 */
export async function startTestBoard(t: Test, env: Record<string, string> = {}, o: { port?: number } = {}): Promise<TestBoard> {
  await assertServicesUp()
  const port = o.port ?? (await freePort())
  const schema = uniqueSchema('agb')
  const url = `http://127.0.0.1:${port}`
  const cfg = loadConfig({
    DATABASE_URL: TEST_DATABASE_URL,
    WIRE_PG_SCHEMA: schema,
    WIRE_CONFIG: '/nonexistent/subwire.config.json',
    SERVER_ADMIN_TOKEN: ADMIN,
    PUBLIC_WIRE_URL: url,
    PUBLIC_WIRE_HOST: `127.0.0.1:${port}`,
    LOG_LEVEL: 'warn',
    ...env,
  })
  let board: Board | null = null
  const lines: string[] = []
  const start = async () => {
    board = await startBoard(cfg, memoryLog('server', lines), { sweeper: false })
    await board.app.listen({ port, host: '127.0.0.1' })
  }
  const stop = async () => {
    const b = board
    board = null
    await b?.close()
  }
  await start()
  t.teardown(async () => {
    await stop()
    await dropSchema(schema)
  })
  return { url, authority: `127.0.0.1:${port}`, port, schema, board: () => board!, stop, start }
}

export interface TestAggregator {
  url: string
  cfg: Config
  logs: string[]
  started(): Awaited<ReturnType<typeof startAggregator>>
  stop(): Promise<void>
  start(): Promise<void>
  register(boardUrl: string, token?: string): Promise<{ status: number; body: any }>
}

/** The aggregator in this process on its own schema, listening on 127.0.0.1 (a fixed port, so it can restart there). */
export async function startTestAggregator(
  t: Test,
  env: Record<string, string> = {},
  opts: AggregatorOptions = {},
): Promise<TestAggregator> {
  await assertServicesUp()
  const port = await freePort()
  const schema = uniqueSchema('agg')
  const url = `http://127.0.0.1:${port}`
  const cfg = loadConfig({
    DATABASE_URL: TEST_DATABASE_URL,
    AGGREGATOR_PG_SCHEMA: schema,
    AGGREGATOR_ALLOW_HOSTS: '127.0.0.1',
    SERVER_ADMIN_TOKEN: ADMIN,
    PUBLIC_WIRE_URL: url,
    WAKE_FALLBACK_POLL_MS: '1000',
    LOG_LEVEL: 'debug',
    ...env,
  })
  const logs: string[] = []
  let agg: Awaited<ReturnType<typeof startAggregator>> | null = null
  const start = async () => {
    agg = await startAggregator(cfg, memoryLog('aggregator', logs), { followSyncMs: 200, ...opts })
    await agg.app.listen({ port, host: '127.0.0.1' })
  }
  const stop = async () => {
    const a = agg
    agg = null
    await a?.close()
  }
  await start()
  t.teardown(async () => {
    await stop()
    await dropSchema(schema)
  })
  const register = async (boardUrl: string, token = TOKEN) => {
    const r = await fetch(`${url}/registry/boards`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth(token) },
      body: JSON.stringify({ url: boardUrl }),
    })
    return { status: r.status, body: await r.json() }
  }
  return { url, cfg, logs, started: () => agg!, stop, start, register }
}
