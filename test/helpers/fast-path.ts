import type net from 'node:net'
import type { Test } from 'tap'
import { rawConnection, type RawConnection } from './raw-http.js'
import { startStack, type StackOptions } from './stack.js'
import { until } from './wait.js'

/**
 * A stack (`env` its settings) listening on a real port, for the fast-path tests: `open()` a raw connection (ended at
 * teardown); `viaFastify()` one whose first request (GET /sw/wire) handed it to fastify.
 */
export async function listening(t: Test, env: Record<string, string> = {}, o: Omit<StackOptions, 'env'> = {}) {
  const s = await startStack(t, { ...o, env })
  await s.app.listen({ port: 0, host: '127.0.0.1' })
  const port = (s.app.server.address() as net.AddressInfo).port
  const open = (): RawConnection => {
    const c = rawConnection(port)
    t.teardown(() => c.end())
    return c
  }
  /** A connection fastify owns: its first request is not the fast path's. */
  const viaFastify = async () => {
    const c = open()
    c.get('/sw/wire')
    await until(() => c.answers.length === 1, 5000, 'GET /sw/wire answered')
    c.answers.length = 0
    return c
  }
  return { s, port, open, viaFastify }
}
