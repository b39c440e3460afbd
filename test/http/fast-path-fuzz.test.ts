import { createServer, type IncomingMessage } from 'node:http'
import net, { type AddressInfo } from 'node:net'
import t from 'tap'
import { parseRequestHead } from '../../libs/shared/http/fast-path/request-head.js'

// A differential fuzz test of the fast path's request-head parser against node's own (llhttp):
// thousands of generated heads (Content-Length and Transfer-Encoding spellings and duplicates,
// whitespace, CR/LF/NUL placement, obs-fold, long lines, odd targets, pipelined tails). The
// property: each head is either handed over (the parser says it is not the fast path's) or parsed
// to the same method, target, Host, Authorization, X-Forwarded-For and message length as node.
// A pipelined probe request after each head shows where node thinks the first message ends.

const CASES = Number(process.env.FUZZ_CASES ?? 3000)
const SEED = Number(process.env.FUZZ_SEED ?? Date.now() % 1_000_000)
const PATHS = ['/sw/signals', '/sw/v1/signals']
const PROBE = 'GET /probe HTTP/1.1\r\nHost: probe\r\n\r\n'

/** mulberry32: a small seeded generator, so a failing case can be replayed with FUZZ_SEED. */
function rng(seed: number) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let x = Math.imul(a ^ (a >>> 15), 1 | a)
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296
  }
}

function generator(seed: number) {
  const r = rng(seed)
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!
  const maybe = (p: number) => r() < p
  const methods = ['GET', 'GET', 'GET', 'GET', 'get', 'POST', 'HEAD', 'GET\t', ' GET', 'GE T']
  const targets = [
    '/sw/signals',
    '/sw/signals',
    '/sw/signals?cursor=1&wait=25',
    '/sw/v1/signals?tag=a,b',
    '/sw/signals?',
    '/sw/signals/',
    '/sw/signals#x',
    '/sw/signals;x',
    '//sw/signals',
    '/sw/%73ignals',
    'http://h/sw/signals',
    '*',
    '/sw/signals?q=%00',
    '/sw/signals?q=a b',
    '/sw/signals\t',
    '/sw/signals?x=\u00e9',
    '/other',
    `/sw/signals?${'a'.repeat(3000)}`,
  ]
  const versions = [' HTTP/1.1', ' HTTP/1.1', ' HTTP/1.1', ' HTTP/1.0', ' HTTP/1.10', ' http/1.1', '  HTTP/1.1', ' HTTP/2.0', '']
  const eols = ['\r\n', '\r\n', '\r\n', '\r\n', '\n', '\r', '\r\r\n']
  const headers: Array<() => string> = [
    () => `Host: ${pick(['board.example', '', ' board.example ', 'a b', 'h\u0000x', 'board.example:4000'])}`,
    () => `${pick(['Host', 'host', 'HOST', 'Host ', ' Host', 'Ho st'])}: board.example`,
    () =>
      `Authorization: ${pick(['Bearer tok-123456', 'Bearer  tok', '  Bearer tok  ', 'Bearer \t tok', 'Basic eA==', '', 'Bearer tok\u0000'])}`,
    () => `${pick(['authorization', 'AUTHORIZATION', 'Authorization '])}: Bearer x`,
    () => `Content-Length: ${pick(['0', '5', ' 0', '+0', '0, 0', '-1', 'abc', '00'])}`,
    () => `${pick(['Content-length', 'content-length ', 'Content-Length\t'])}: 0`,
    () => `Transfer-Encoding: ${pick(['chunked', 'Chunked', 'chunked, identity', 'identity', 'xchunked', ' chunked'])}`,
    () => `Connection: ${pick(['close', 'keep-alive', 'Upgrade', 'xclose', 'keep-alive, close', 'upgrade, close', ''])}`,
    () => `Upgrade: ${pick(['websocket', 'h2c'])}`,
    () => `Expect: 100-continue`,
    () => `X-Forwarded-For: ${pick(['203.0.113.1', '203.0.113.1, 10.0.0.1', '', ' 1.2.3.4 '])}`,
    () => `X-Long: ${'v'.repeat(pick([10, 1000, 8000, 17000]))}`,
    () => `X-Fold: a${pick(['\r\n b', '\r\n\tb', '\n b'])}`,
    () => pick([' leading-space: x', 'no-colon', ': empty-name', 'x-nul\u0000: y', 'X-Ctl: a\u0001b', 'X-Obs: \u00ff', 'X-Del: a\u007fb']),
    () => `Accept: */*`,
  ]
  return () => {
    const eol = pick(eols)
    // mostly plain, so the fast path takes many of them: one odd part at a time is what finds edges
    const method = maybe(0.85) ? 'GET' : pick(methods)
    const target = maybe(0.6) ? pick(['/sw/signals', '/sw/signals?cursor=3&wait=25', '/sw/v1/signals?limit=5']) : pick(targets)
    const version = maybe(0.85) ? ' HTTP/1.1' : pick(versions)
    const lines = [`${method} ${target}${version}`]
    if (maybe(0.85)) lines.push('Host: board.example')
    for (let i = Math.floor(r() * 3); i > 0; i--) lines.push(pick(headers)())
    const lineEnd = () => (maybe(0.97) ? '\r\n' : eol)
    let head = lines.map((l) => l + lineEnd()).join('') + lineEnd()
    if (maybe(0.05)) head = head.replace('\r\n', '\r\n\u0000')
    return Buffer.from(head + (maybe(0.3) ? PROBE : ''), 'latin1')
  }
}

interface NodeView {
  error: boolean
  first?: { method: string; url: string; host?: string; authorization?: string; forwardedFor?: string }
  probeSeen: boolean
}

/** What node's HTTP server makes of `bytes` followed by a probe request, over a real socket. */
function viewOf(port: number, bytes: Buffer, seen: Map<number, IncomingMessage[]>, errors: Set<number>): Promise<NodeView> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: '127.0.0.1' })
    socket.on('error', () => {})
    socket.resume()
    let local = 0
    socket.once('connect', () => {
      local = socket.localPort!
      socket.write(Buffer.concat([bytes, Buffer.from(PROBE)]))
      socket.end()
    })
    socket.once('close', () => {
      const reqs = seen.get(local) ?? []
      const first = reqs[0]
      resolve({
        error: errors.has(local),
        probeSeen: reqs.some((q, i) => i > 0 && q.url === '/probe'),
        ...(first && {
          first: {
            method: first.method!,
            url: first.url!,
            host: first.headers.host,
            authorization: first.headers.authorization,
            forwardedFor: first.headers['x-forwarded-for'] as string | undefined,
          },
        }),
      })
    })
  })
}

t.test(`the fast path's parser agrees with node's on ${CASES} generated heads (FUZZ_SEED=${SEED})`, async (t) => {
  const seen = new Map<number, IncomingMessage[]>() // by the client's port (a closed socket forgets its peer)
  const errors = new Set<number>()
  const server = createServer((req, res) => {
    const port = req.socket.remotePort!
    const list = seen.get(port) ?? []
    list.push(req)
    seen.set(port, list)
    req.resume()
    res.end()
  })
  server.on('clientError', (_err, socket) => {
    errors.add((socket as net.Socket).remotePort!)
    socket.destroy()
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  t.teardown(() => new Promise<void>((r) => server.close(() => r())))
  const port = (server.address() as AddressInfo).port
  const next = generator(SEED)
  let taken = 0
  let agreed = 0
  for (let i = 0; i < CASES; i++) {
    const bytes = next()
    const req = parseRequestHead(bytes, PATHS)
    if (!req) continue // handed over: node and fastify judge it
    taken++
    seen.clear()
    errors.clear() // client ports are reused from case to case
    const node = await viewOf(port, bytes.subarray(0, req.length), seen, errors)
    const qm = node.first?.url.indexOf('?') ?? -1
    const ok =
      (!node.error || req.close) && // after Connection: close, node refuses the probe that follows: its error is about that
      node.first?.method === 'GET' &&
      node.first.url.slice(0, qm < 0 ? undefined : qm) === req.path &&
      (qm < 0 ? '' : node.first.url.slice(qm + 1)) === req.query &&
      node.first.host !== undefined &&
      node.first.authorization === req.authorization &&
      node.first.forwardedFor === req.forwardedFor &&
      (node.probeSeen || req.close) // node's message ended where the fast path's did (after Connection: close, node reads no further)
    if (ok) agreed++
    else
      t.fail(
        `disagreement on ${JSON.stringify(bytes.subarray(0, req.length).toString('latin1'))}: fast path ${JSON.stringify(req)}, node ${JSON.stringify(node)}`,
      )
  }
  t.ok(taken > CASES / 10, `the fast path took ${taken} of ${CASES} heads (the rest were handed over)`)
  t.equal(agreed, taken, 'node parsed every head the fast path took the same way')
})
