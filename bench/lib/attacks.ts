import { randomUUID } from 'node:crypto'
import { connect } from 'node:net'
import { from, type Client } from './net.js'

/** One attack, run until `stop` aborts; it counts its requests by status (0: refused or cut). */
export interface Attack {
  name: string
  run(url: string, stop: AbortSignal, statuses: Map<number, number>): Promise<void>
}

const count = (m: Map<number, number>, status: number) => void m.set(status, (m.get(status) ?? 0) + 1)
const loops = async (n: number, stop: AbortSignal, body: (i: number) => Promise<void>) => {
  await Promise.all(
    Array.from({ length: n }, async (_, i) => {
      while (!stop.aborted) await body(i)
    }),
  )
}
/** An attacker with many addresses, one per request in turn, so per-address budgets alone do not stop it. */
/** `n` clients from `base`.1, .2, …; past .254 on into the next /24 (`base` is three octets). */
const addresses = (url: string, n: number, base: string): Client[] => {
  const [a, b, c] = base.split('.').map(Number)
  return Array.from({ length: n }, (_, i) => from(url, `${a}.${b}.${c! + Math.floor(i / 254)}.${(i % 254) + 1}`, 4))
}

/** The feed head now: long-polls from it wait (a cursor far behind would be answered from the database at once). */
const head = async (c: Client) => (JSON.parse((await c.request('GET', '/sw/signals?limit=1')).body) as { nextCursor: number }).nextCursor

/** The flood's requests in flight (BENCH_FLOOD_AT_ONCE, default 16): raise it to find where the process sheds. */
const FLOOD_AT_ONCE = Number(process.env.BENCH_FLOOD_AT_ONCE ?? 16)
const PATHOLOGICAL = `Bearer a${' '.repeat(15_900)}b`
const TAGS = Array.from({ length: 130 }, (_, i) => `tag${i}`).join(',')

export const ATTACKS: Attack[] = [
  {
    // more than per-address budgets hold back: 256 addresses, each well within its own budget
    name: `a flood of deep reads and filtered newest pages (256 addresses, ${FLOOD_AT_ONCE} at a time)`,
    async run(url, stop, statuses) {
      const cs = addresses(url, 256, '127.0.8') // 127.0.8.1–254 and 127.0.9.1–2 (the honest publishers are 127.0.7.x)
      let n = 0
      await loops(FLOOD_AT_ONCE, stop, async () => {
        const i = n++
        const path = i % 2 ? `/sw/signals?cursor=${Math.floor(Math.random() * 15_000)}&limit=7` : `/sw/signals?tag=t${i % 500}`
        count(statuses, (await cs[i % cs.length]!.request('GET', path)).status)
      })
      for (const c of cs) c.close()
    },
  },
  {
    name: 'Authorization header (15,900 spaces)',
    async run(url, stop, statuses) {
      const c = from(url, '127.0.2.1', 8)
      await loops(8, stop, async () =>
        count(statuses, (await c.request('POST', '/sw/signals', '{"$type":"x"}', { authorization: PATHOLOGICAL })).status),
      )
      c.close()
    },
  },
  {
    name: 'expensive reads (q, 1,820 tags, tags, counts, thread)',
    async run(url, stop, statuses) {
      const cs = addresses(url, 50, '127.0.3')
      const paths = [
        () => `/sw/signals?cursor=0&includeExpired=1&q=${randomUUID()}`,
        () => `/sw/signals?${Array.from({ length: 14 }, () => `tag=${TAGS}`).join('&')}`,
        () => `/sw/signals?cursor=0&tag=${TAGS.split(',').slice(0, 16).join(',')}`,
        () => '/sw/tags',
        () => '/sw/wire',
        () => '/sw/stats?buckets=120&bucketSeconds=60',
        () => `/sw/signals?q=${'x'.repeat(256)}`,
      ]
      let n = 0
      await loops(8, stop, async () => {
        const i = n++
        count(statuses, (await cs[i % cs.length]!.request('GET', paths[i % paths.length]!())).status)
      })
      for (const c of cs) c.close()
    },
  },
  {
    name: 'A2A non-blocking sends (200 at once, wait 25)',
    async run(url, stop, statuses) {
      const c = from(url, '127.0.4.1', 200)
      const cursor = await head(c)
      const send = () =>
        JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'message/send',
          params: {
            configuration: { blocking: false },
            message: {
              kind: 'message',
              messageId: randomUUID(),
              role: 'user',
              parts: [{ kind: 'data', data: { cursor, wait: 25, tag: 'never' } }],
            },
          },
        })
      await loops(200, stop, async () => count(statuses, (await c.request('POST', '/a2a', send(), {}, stop)).status))
      c.close()
    },
  },
  {
    name: 'slow-loris bodies (200 sockets, a byte a second)',
    async run(url, stop, statuses) {
      const u = new URL(url)
      const sockets = Array.from({ length: 200 }, () => {
        const s = connect({ host: u.hostname, port: Number(u.port), localAddress: '127.0.5.1' })
        s.on('error', () => {})
        s.on('close', () => count(statuses, 0))
        s.write('POST /sw/signals HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 60000\r\n\r\n{')
        return s
      })
      const drip = setInterval(() => sockets.forEach((s) => void s.write(' ')), 1000)
      await new Promise((r) => stop.addEventListener('abort', r, { once: true }))
      clearInterval(drip)
      for (const s of sockets) s.destroy()
    },
  },
  {
    name: 'long-polls from one address (400 at once)',
    async run(url, stop, statuses) {
      const c = from(url, '127.0.6.1', 400)
      const cursor = await head(c)
      await loops(400, stop, async () =>
        count(statuses, (await c.request('GET', `/sw/signals?cursor=${cursor}&tag=never&wait=25`, undefined, {}, stop)).status),
      )
      c.close()
    },
  },
]
