import http from 'node:http'
import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'

/** What the suites read of an answer, the same whether it came through `inject` or a socket. */
interface Answer {
  statusCode: number
  headers: Record<string, string | string[] | undefined>
  body: string
  json(): any
}

/**
 * Sends `app.inject`'s requests over a real socket to the listening `app` instead (the path
 * production takes: the fast path for GET /sw/signals, node's server and fastify for the rest).
 * A request that names a `remoteAddress` outside 127.0.0.0/8 cannot come from there over a socket:
 * it keeps going through `inject`.
 */
export async function injectOverSockets(app: FastifyInstance): Promise<() => void> {
  await app.listen({ port: 0, host: '127.0.0.1' })
  const port = (app.server.address() as AddressInfo).port
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 })
  const inject = app.inject.bind(app)
  ;(app as { inject: unknown }).inject = (o: {
    method?: string
    url: string
    headers?: Record<string, string>
    payload?: unknown
    remoteAddress?: string
  }) => {
    if (o.remoteAddress !== undefined && !o.remoteAddress.startsWith('127.')) return inject(o as never)
    const body = o.payload === undefined ? undefined : typeof o.payload === 'string' ? o.payload : JSON.stringify(o.payload)
    const headers: Record<string, string> = { ...(body !== undefined && { 'content-type': 'application/json' }), ...o.headers }
    return new Promise<Answer>((resolve, reject) => {
      const req = http.request(
        {
          host: '127.0.0.1',
          port,
          method: o.method ?? 'GET',
          path: o.url,
          headers,
          agent,
          ...(o.remoteAddress && { localAddress: o.remoteAddress }),
        },
        (res) => {
          let text = ''
          res.setEncoding('utf8')
          res.on('data', (c: string) => (text += c))
          res.on('end', () => resolve({ statusCode: res.statusCode!, headers: res.headers, body: text, json: () => JSON.parse(text) }))
        },
      )
      req.on('error', reject)
      req.end(body)
    })
  }
  return () => agent.destroy()
}
