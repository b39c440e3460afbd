import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { Test } from 'tap'
import { startListening } from '../agents/listen.js'
import { freePort } from '../helpers/process.js'
import { startStack, type StackOptions } from '../helpers/stack.js'
import { WireClient, type EmittedSignal, type FetchLike } from '../../client/src/index.js'

export const ADMIN_TOKEN = 'admin-secret-token'
export const TOKEN = 'client-agent-token'

/**
 * With WIRE_AGGREGATOR_URL set, every board these suites start is registered with that aggregator
 * and reached through it: the client's base URL is `{aggregator}/sw/{authority}`
 * (test/aggregator/client-suites.test.ts runs the suites so).
 */
const VIA_AGGREGATOR = process.env.WIRE_AGGREGATOR_URL
/**
 * `reference`: the client's requests take the reference platform's public form through the
 * aggregator, `{aggregator}/sw/{authority}/signals` for the board's `/sw/signals` (the client itself
 * always writes `{base}/sw/signals`; this fetch drops that `/sw`).
 */
const REFERENCE_FORM = process.env.WIRE_AGGREGATOR_FORM === 'reference'

/** The fetch the suites' clients use: the global one, or through the reference form. */
export const formFetch: FetchLike = (input, init) => {
  if (!VIA_AGGREGATOR || !REFERENCE_FORM) return fetch(input, init)
  const m = /^(.*\/sw\/[^/?]+)\/sw(\/.*)$/.exec(input)
  return fetch(m && input.startsWith(`${VIA_AGGREGATOR}/sw/`) ? m[1]! + m[2]! : input, init)
}

/** The single-process board on a real port, and a client for it (directly, or through an aggregator). */
export async function listeningBoard(t: Test, o: StackOptions = {}) {
  if (!VIA_AGGREGATOR) {
    const { s, url } = await startListening(t, o)
    return { s, url, wire: new WireClient({ url, token: TOKEN, adminToken: ADMIN_TOKEN }) }
  }
  const port = await freePort()
  const direct = `http://127.0.0.1:${port}`
  // a distinct authority per board: the aggregator keys its registry by authority
  const s = await startStack(t, { ...o, env: { PUBLIC_WIRE_URL: direct, PUBLIC_WIRE_HOST: `127.0.0.1:${port}`, ...o.env } })
  await s.app.listen({ port, host: '127.0.0.1' })
  const register = () =>
    fetch(`${VIA_AGGREGATOR}/registry/boards`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
      body: JSON.stringify({ url: direct }),
    })
  let r = await register()
  // a board just started may shed load for a moment (503 under event-loop delay): registration says `unreachable`; ask again
  for (let i = 0; i < 5 && r.status === 400; i++) r = await new Promise((ok) => setTimeout(ok, 200 * (i + 1))).then(register)
  if (r.status !== 201) throw new Error(`registration with ${VIA_AGGREGATOR} failed: ${r.status} ${await r.text()}`)
  const url = `${VIA_AGGREGATOR}/sw/${s.cfg.authority}`
  return { s, url, wire: new WireClient({ url, token: TOKEN, adminToken: ADMIN_TOKEN, fetch: formFetch }) }
}

/**
 * A fetch that records every feed page the follower receives (ids as the server sent them, before
 * the client's deduplication), so a test can prove the cursor itself repeats and skips nothing.
 */
export function recordingFetch(): { fetch: FetchLike; pages: string[][] } {
  const pages: string[][] = []
  const f: FetchLike = async (input, init) => {
    const res = await formFetch(input, init)
    if (res.ok && new URL(input).pathname.endsWith('/sw/signals') && (init.method ?? 'GET') === 'GET') {
      const body = (await res.clone().json()) as { signals: EmittedSignal[] }
      pages.push(body.signals.map((s) => s.id))
    }
    return res
  }
  return { fetch: f, pages }
}

/** Iterates `it` in the background, collecting until `stop()`; `until(n)` resolves once n are in. */
export function collect(it: AsyncIterable<EmittedSignal>) {
  const got: EmittedSignal[] = []
  const waiters: Array<{ n: number; resolve: () => void }> = []
  const done = (async () => {
    for await (const s of it) {
      got.push(s)
      for (const w of waiters.filter((w) => got.length >= w.n)) waiters.splice(waiters.indexOf(w), 1), w.resolve()
    }
  })()
  return {
    got,
    done,
    until: (n: number, ms = 20_000) =>
      new Promise<void>((resolve, reject) => {
        if (got.length >= n) return resolve()
        const timer = setTimeout(() => reject(new Error(`only ${got.length} of ${n} signals arrived in ${ms} ms`)), ms)
        waiters.push({ n, resolve: () => (clearTimeout(timer), resolve()) })
      }),
  }
}

export type Handler = (req: IncomingMessage, res: ServerResponse, n: number) => void

/** A real local HTTP server answering with `handler` (n counts requests from 1); its URL. */
export async function httpServer(t: Test, handler: Handler): Promise<{ url: string; times: number[] }> {
  const times: number[] = []
  const server = createServer((req, res) => {
    times.push(Date.now())
    handler(req, res, times.length)
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  t.teardown(() => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))))
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, times }
}

/**
 * A proxy in front of a real board that answers the first `failures` feed reads itself with
 * `status` and `Retry-After: retryAfter`, then forwards everything: the network path failing, not our code.
 */
export async function failingProxy(t: Test, target: string, status: number, failures: number, retryAfter: string) {
  const feedTimes: number[] = []
  let failed = 0
  const proxy = await httpServer(t, (req, res) => {
    const feed = req.url?.startsWith('/sw/signals?') || req.url === '/sw/signals'
    if (feed && req.method === 'GET') feedTimes.push(Date.now())
    if (feed && req.method === 'GET' && failed < failures) {
      failed++
      const code = status === 429 ? 'rate_limited' : 'unavailable'
      res.writeHead(status, { 'content-type': 'application/json', 'retry-after': retryAfter })
      return res.end(JSON.stringify({ error: { code, message: `proxy says ${status}` } }))
    }
    const chunks: Buffer[] = []
    req
      .on('data', (c: Buffer) => chunks.push(c))
      .on('end', async () => {
        try {
          const body = chunks.length ? Buffer.concat(chunks) : undefined
          const headers = Object.fromEntries(
            Object.entries(req.headers).filter(([k]) => !['host', 'connection', 'content-length'].includes(k)),
          ) as Record<string, string>
          const up = await fetch(target + req.url, { method: req.method!, headers, ...(body && { body }) })
          res.writeHead(up.status, { 'content-type': up.headers.get('content-type') ?? 'application/json' })
          res.end(Buffer.from(await up.arrayBuffer()))
        } catch {
          res.destroy()
        }
      })
  })
  return { url: proxy.url, feedTimes, failed: () => failed }
}
