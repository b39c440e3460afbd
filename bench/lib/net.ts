import http from 'node:http'

/**
 * HTTP from a chosen loopback address (127.0.0.0/8 is all ours on Linux), so the server sees
 * distinct clients and keys its per-address budgets on them, as it would on the internet.
 */
export function from(baseUrl: string, localAddress: string, maxSockets = 16) {
  const agent = new http.Agent({ keepAlive: true, maxSockets, localAddress })
  const u = new URL(baseUrl)
  return {
    request(method: string, path: string, body?: string, headers: Record<string, string> = {}, signal?: AbortSignal) {
      return new Promise<{ status: number; body: string }>((resolve) => {
        const req = http.request(
          {
            host: u.hostname,
            port: u.port,
            method,
            path,
            agent,
            signal,
            headers: body ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers } : headers,
          },
          (res) => {
            let data = ''
            res.setEncoding('utf8')
            res.on('data', (c) => (data += c))
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body: data }))
            res.on('error', () => resolve({ status: 0, body: '' }))
          },
        )
        req.on('error', () => resolve({ status: 0, body: '' })) // refused, reset or aborted: counted as 0
        if (body) req.write(body)
        req.end()
      })
    },
    close: () => agent.destroy(),
  }
}

export type Client = ReturnType<typeof from>
