import http from 'node:http'

/** A keep-alive HTTP client for load: one agent, as many sockets as asked. */
export function client(baseUrl: string, maxSockets: number) {
  const agent = new http.Agent({ keepAlive: true, maxSockets, maxFreeSockets: maxSockets })
  const u = new URL(baseUrl)
  return {
    agent,
    request(method: string, path: string, body?: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
      return new Promise((resolve, reject) => {
        const req = http.request(
          {
            host: u.hostname,
            port: u.port,
            method,
            path,
            agent,
            headers: body ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers } : headers,
          },
          (res) => {
            let data = ''
            res.setEncoding('utf8')
            res.on('data', (c) => (data += c))
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body: data }))
          },
        )
        req.on('error', reject)
        if (body) req.write(body)
        req.end()
      })
    },
    close: () => agent.destroy(),
  }
}

export interface LoadResult {
  requests: number
  ok: number
  perSecond: number
  p50: number
  p99: number
  max: number
  seconds: number
}

export const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0

/** Runs `concurrency` loops of `op` for `seconds`; latencies in ms. */
export async function closedLoop(
  concurrency: number,
  seconds: number,
  op: (worker: number, i: number) => Promise<boolean>,
): Promise<LoadResult> {
  const lat: number[] = []
  let ok = 0
  const end = Date.now() + seconds * 1000
  const t0 = performance.now()
  await Promise.all(
    Array.from({ length: concurrency }, async (_, w) => {
      for (let i = 0; Date.now() < end; i++) {
        const s = performance.now()
        if (await op(w, i)) ok++
        lat.push(performance.now() - s)
      }
    }),
  )
  const elapsed = (performance.now() - t0) / 1000
  lat.sort((a, b) => a - b)
  return {
    requests: lat.length,
    ok,
    perSecond: Math.round(ok / elapsed),
    p50: round(percentile(lat, 50)),
    p99: round(percentile(lat, 99)),
    max: round(lat.at(-1) ?? 0),
    seconds: round(elapsed),
  }
}

export const round = (n: number, d = 2) => Math.round(n * 10 ** d) / 10 ** d
