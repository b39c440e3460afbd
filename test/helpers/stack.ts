import { Writable } from 'node:stream'
import type { Test } from 'tap'
import { startBoard, type Board } from '../../apps/server/app.js'
import { loadConfig, type Config } from '../../libs/shared/config/index.js'
import { openInfra, type Infra, type Overrides } from '../../libs/shared/context/index.js'
import { createLogger } from '../../libs/shared/log/index.js'
import { injectOverSockets } from './socket-inject.js'
import { assertServicesUp, dropSchema, TEST_DATABASE_URL, TEST_REDIS_URL, uniqueSchema } from './services.js'

export interface StackOptions {
  env?: Record<string, string>
  /** Use the in-process bus instead of Redis. */
  noRedis?: boolean
  /** The read side's tail size and fallback poll (the root's overrides; the stack opens the connections itself). */
  overrides?: Omit<Overrides, 'infra'>
  /** Run the sweeper (pg-boss) in the stack, as `npm start` does. Off by default: it slows every start. */
  sweeper?: boolean
  /** Sees every route as it is registered (fastify's onRoute hook), e.g. to list what the board serves. */
  onRoute?: (route: { method: string | string[]; url: string }) => void
  /** Runs once the schema is migrated, before the board starts (rows seeded here are in the feed from the start). */
  seed?: (infra: Infra, schema: string) => Promise<void>
}

export interface Stack extends Board {
  cfg: Config
  infra: Infra
  schema: string
  /** Every log line the stack wrote, for tests that check what is (not) logged. */
  logs: string[]
  bearer(token?: string): { authorization: string }
  publish(body: unknown, token?: string): Promise<{ statusCode: number; json: () => any; headers: Record<string, unknown> }>
  read(query?: string): Promise<any>
}

/**
 * The single-process board on the machine's PostgreSQL (a fresh schema per call) and Redis
 * (namespaced by that schema), torn down with the test.
 */
export async function startStack(t: Test, o: StackOptions = {}): Promise<Stack> {
  await assertServicesUp()
  const schema = uniqueSchema()
  const cfg = loadConfig({
    DATABASE_URL: TEST_DATABASE_URL,
    ...(o.noRedis ? {} : { REDIS_URL: TEST_REDIS_URL }),
    WIRE_PG_SCHEMA: schema,
    WIRE_CONFIG: '/nonexistent/subwire.config.json',
    SERVER_ADMIN_TOKEN: 'admin-secret-token',
    LOG_LEVEL: 'debug',
    // @NOTE no shedding on event-loop delay unless a test sets it (the tests about shedding do): on
    // a machine 4-5x slower, tap's parallel files push a board's loop past 1 s, and a test about
    // something else would get 503 "overloaded" for timing it does not control
    SHED_EVENT_LOOP_DELAY_MS: '0',
    ...o.env,
  })
  const logs: string[] = []
  const sink = new Writable({
    write(chunk, _enc, cb) {
      logs.push(String(chunk))
      cb()
    },
  })
  const log = createLogger('server', cfg.logLevel, sink)
  const infra = await openInfra(cfg, log, { migrate: true })
  if (o.seed)
    await o.seed(infra, schema).catch(async (err: unknown) => {
      await infra.close()
      throw err
    })
  const board = await startBoard(cfg, log, {
    overrides: { ...o.overrides, infra },
    sweeper: o.sweeper ?? false,
    ...(o.onRoute && { onRoute: o.onRoute }),
  }).catch(async (err: unknown) => {
    await infra.close()
    throw err
  })
  // WIRE_TEST_TRANSPORT=socket: the suite's requests go over real sockets (the fast path), not inject
  const sockets = process.env.WIRE_TEST_TRANSPORT === 'socket' ? await injectOverSockets(board.app) : null
  t.teardown(async () => {
    sockets?.()
    await board.close()
    await infra.close() // handed in: the root closes only what it opened
    await dropSchema(schema) // and its pg-boss schema
  })
  const bearer = (token = 'agent-one-token') => ({ authorization: `Bearer ${token}` })
  return {
    ...board,
    cfg,
    infra,
    schema,
    logs,
    bearer,
    publish: (body, token) => board.app.inject({ method: 'POST', url: '/sw/signals', headers: bearer(token), payload: body as object }),
    read: async (query = '') => (await board.app.inject({ url: `/sw/signals${query ? `?${query}` : ''}` })).json(),
  }
}
