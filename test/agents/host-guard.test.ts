import http from 'node:http'
import t from 'tap'
import { startListening } from './listen.js'

const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'host-guard-test', version: '1.0.0' } },
})
const A2A_READ = JSON.stringify({
  jsonrpc: '2.0',
  id: 2,
  method: 'message/send',
  params: { message: { kind: 'message', messageId: 'm-1', role: 'user', parts: [{ kind: 'data', data: { limit: 1 } }] } },
})

/** A POST with exactly the Host and Origin given (fetch would not let a test choose Host). */
function post(url: string, path: string, body: string, headers: Record<string, string>): Promise<{ status: number; json: any }> {
  const { port } = new URL(url)
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      },
      (res) => {
        let text = ''
        res.setEncoding('utf8').on('data', (c) => (text += c))
        res.on('end', () => resolve({ status: res.statusCode!, json: text ? JSON.parse(text) : null }))
      },
    )
    req.on('error', reject)
    req.end(body)
  })
}

t.test('DNS-rebinding protection on /mcp and /a2a', async (t) => {
  const { url } = await startListening(t, { env: { PUBLIC_WIRE_HOST: 'board.example', AGENTS_ALLOWED_HOSTS: 'wire.internal,10.1.2.3' } })
  const port = new URL(url).port

  for (const [path, body] of [
    ['/mcp', INITIALIZE],
    ['/a2a', A2A_READ],
  ] as const) {
    t.test(`${path}: a foreign Host or Origin is refused with 403 before anything runs`, async (t) => {
      const cases: Array<Record<string, string>> = [
        { host: `evil.example:${port}` },
        { host: `evil.example:${port}`, origin: `http://evil.example:${port}` },
        { host: `127.0.0.1:${port}`, origin: `http://evil.example:${port}` },
        { host: `localhost:${port}`, origin: 'null' },
        { host: `board.example.evil.example` },
      ]
      for (const headers of cases) {
        const r = await post(url, path, body, headers)
        t.equal(r.status, 403, JSON.stringify(headers))
        t.equal(r.json.error.data.code, 'forbidden')
      }
    })

    t.test(`${path}: loopback forms, the public name and the names the setting adds are answered`, async (t) => {
      const cases: Array<Record<string, string>> = [
        { host: `127.0.0.1:${port}` },
        { host: `localhost:${port}`, origin: `http://localhost:6274` },
        { host: `[::1]:${port}`, origin: `http://[::1]:${port}` },
        { host: 'board.example', origin: 'https://board.example' },
        { host: 'BOARD.example:443' },
        { host: `wire.internal:${port}`, origin: `http://10.1.2.3:${port}` },
      ]
      for (const headers of cases) {
        const r = await post(url, path, body, headers)
        t.equal(r.status, 200, JSON.stringify(headers))
        t.ok(r.json.result, 'a JSON-RPC result')
      }
    })
  }

  t.test('the agent card stays readable from anywhere (public data, no action)', async (t) => {
    const r = await fetch(`${url}/.well-known/agent-card.json`, { headers: { origin: 'http://evil.example' } })
    t.equal(r.status, 200)
  })
})
