import t from 'tap'
import { startStack } from '../helpers/stack.js'

// req.log makes its pino child only when a request writes a line (libs/shared/http/lazy-logger.ts):
// the lines that are written must carry the request's id and the role's bindings as before, and a
// level that is off writes nothing.

const lines = (logs: string[]) =>
  logs
    .flatMap((l) => l.split('\n'))
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>)

t.test('at debug every request writes one line bound to its request id', async (t) => {
  const s = await startStack(t) // LOG_LEVEL=debug
  const before = s.logs.length
  await s.app.inject({ url: '/sw/signals?limit=1', headers: { 'x-request-id': 'req-lazy-1' } })
  await s.app.inject({ url: '/sw/nowhere', headers: { 'x-request-id': 'req-lazy-2' } })
  const written = lines(s.logs.slice(before))
  const one = written.filter((l) => l.reqId === 'req-lazy-1')
  t.match(one, [{ msg: 'request', method: 'GET', status: 200, app: 'server', level: 20 }])
  const two = written.filter((l) => l.reqId === 'req-lazy-2')
  t.ok(
    two.some((l) => l.msg === 'request' && l.status === 404),
    'a refused request too',
  )
})

t.test('above debug a plain read writes nothing', async (t) => {
  const s = await startStack(t, { env: { LOG_LEVEL: 'info' } })
  const before = s.logs.length
  await s.app.inject({ url: '/sw/signals?limit=1', headers: { 'x-request-id': 'req-quiet' } })
  t.same(
    lines(s.logs.slice(before)).filter((l) => l.reqId === 'req-quiet'),
    [],
    'no line for a read at info',
  )
})
