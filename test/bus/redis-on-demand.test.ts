import t, { type Test } from 'tap'
import { projectPath } from '../../libs/shared/paths.js'
import { NODE } from '../cli/run.js'
import { freePort, startProcess } from '../helpers/process.js'
import { eventually } from '../helpers/wait.js'
import { dropSchema, TEST_DATABASE_URL, TEST_REDIS_URL, uniqueSchema } from '../helpers/services.js'

// ioredis loads with the first Redis connection (libs/shared/bus/redis.ts): `npm start` without
// REDIS_URL never loads it; with REDIS_URL it does, and its connection to Redis is up. The process
// reports, as it exits, whether it loaded ioredis (node's module hooks, preloaded with --import).

const REPORT = `data:text/javascript,${encodeURIComponent(
  `import { registerHooks } from 'node:module'
   const seen = new Set()
   registerHooks({ load(url, context, next) { seen.add(url); return next(url, context) } })
   process.on('exit', () => process.stdout.write('ioredis loaded: ' + [...seen].some((u) => u.includes('/node_modules/ioredis/')) + '\\n'))`,
)}`

/** The single process (`npm start`'s code) on a schema of its own; with REDIS_URL, `redisUp` once wire_redis_up reads 1 (false after 5 s). */
async function singleProcess(t: Test, env: Record<string, string>) {
  const schema = uniqueSchema('ondemand')
  t.teardown(() => dropSchema(schema))
  const port = await freePort()
  const server = await startProcess(
    t,
    NODE,
    ['--import', REPORT, projectPath('dist/apps/server/main.js')],
    {
      PATH: process.env.PATH,
      DATABASE_URL: TEST_DATABASE_URL,
      WIRE_PG_SCHEMA: schema,
      WIRE_CONFIG: '/nonexistent/board.json',
      SERVER_PORT: String(port),
      LOG_LEVEL: 'warn',
      ...env,
    },
    /Or with the wire command line/,
    60_000,
  )
  const redisUp =
    env.REDIS_URL !== undefined &&
    (await eventually(async () => /^wire_redis_up 1$/m.test(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text())))
  server.signal('SIGTERM')
  await server.exited
  return { redisUp, loaded: /ioredis loaded: (true|false)/.exec(server.output())?.[1] }
}

t.test('without REDIS_URL the single process never loads ioredis', async (t) => {
  const { loaded } = await singleProcess(t, {})
  t.equal(loaded, 'false')
})

t.test('with REDIS_URL it loads it and connects', async (t) => {
  const { loaded, redisUp } = await singleProcess(t, { REDIS_URL: TEST_REDIS_URL })
  t.equal(loaded, 'true')
  t.equal(redisUp, true, 'wire_redis_up 1')
})
