import { Agent, request } from 'undici'

// The honest side of bench/aggregator-attack.ts: publishers on their own boards, and the clients
// whose latency an attack must not take: followers long-polling a board through the aggregator's
// proxy (anonymous ones share an upstream request, ones with a token each have their own), one
// follower directly on each board (the machine's own share of any slow-down), non-waiting proxied
// reads, searches, and a search long-poll that times publish → searchable. Every client says its
// own address (X-Forwarded-For; the aggregator trusts 127.0.0.1), so per-address budgets count each.
// Samples carry their time, so a phase takes the ones inside its window.

export interface Sample {
  /** When it was taken (Date.now()). */
  at: number
  ms: number
}
export type Kind = 'followed' | 'direct' | 'read' | 'search' | 'indexed'
export interface HonestOptions {
  agg: string
  /** Each board's base URL and authority. */
  boards: Array<{ url: string; authority: string }>
  publishPerSecond: number
  /** Followers through the aggregator per board: the first half anonymous, the rest with a token. */
  followers: number
  readers: number
  searchers: number
  /** Pause between two requests of a reader or searcher, ms. */
  thinkMs: number
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

export function honestLoad(o: HonestOptions) {
  const dispatcher = new Agent({ connections: 256, keepAliveTimeout: 30_000, headersTimeout: 60_000, bodyTimeout: 60_000 })
  const samples: Record<Kind, Sample[]> = { followed: [], direct: [], read: [], search: [], indexed: [] }
  /** Non-2xx answers (and failed exchanges as 0) to the honest clients, with when. */
  const failures: Array<{ at: number; status: number; kind: Kind }> = []
  const sent = new Map<string, number>() // a publish's text → when it was sent
  let running = true
  let client = 0
  const get = async (url: string, kind: Kind, headers: Record<string, string>) => {
    const t0 = performance.now()
    try {
      const res = await request(url, { dispatcher, headers })
      const body = await res.body.text()
      if (res.statusCode !== 200) {
        failures.push({ at: Date.now(), status: res.statusCode, kind })
        return null
      }
      return {
        ms: performance.now() - t0,
        body: JSON.parse(body) as { signals: Array<{ payload: { text?: string } }>; nextCursor: number },
      }
    } catch {
      failures.push({ at: Date.now(), status: 0, kind })
      return null
    }
  }
  const delivered = (kind: Kind, page: { signals: Array<{ payload: { text?: string } }> }) => {
    const now = Date.now()
    for (const s of page.signals) {
      const at = sent.get(s.payload.text ?? '')
      if (at !== undefined) samples[kind].push({ at: now, ms: now - at })
    }
  }
  /** A follower: long-polls `base` (with `query`, `a=b&`) from its head, and records each honest signal's publish → arrival. */
  const follow = async (base: string, kind: Kind, headers: Record<string, string>, query = '') => {
    let cursor = (await get(`${base}?${query}limit=1`, kind, headers))?.body.nextCursor ?? 0
    while (running) {
      const page = await get(`${base}?${query}cursor=${cursor}&wait=25&limit=100`, kind, headers)
      if (!page) {
        await sleep(1000) // as a follower backs off (the aggregator's refusals say 1-2 s)
        continue
      }
      delivered(kind, page.body)
      cursor = page.body.nextCursor
    }
  }
  const loop = async (kind: Kind, url: () => string, headers: Record<string, string>) => {
    while (running) {
      const r = await get(url(), kind, headers)
      if (r) samples[kind].push({ at: Date.now(), ms: r.ms })
      await sleep(o.thinkMs)
    }
  }
  const as = () => ({ 'x-forwarded-for': `10.1.${(client >> 8) & 255}.${client++ & 255}` })
  const tasks: Array<Promise<void>> = []
  let published = 0
  for (const [b, board] of o.boards.entries()) {
    const via = `${o.agg}/sw/${board.authority}/sw/signals`
    for (let i = 0; i < o.followers; i++)
      tasks.push(follow(via, 'followed', { ...as(), ...(i >= o.followers / 2 && { authorization: `Bearer honest-follower-${b}-${i}` }) }))
    tasks.push(follow(`${board.url}/sw/signals`, 'direct', {}))
    tasks.push(
      (async () => {
        for (let n = 0; running; n++) {
          const text = `honest board${b} signal${n} ${Math.random().toString(36).slice(2)}`
          sent.set(text, Date.now())
          const body = JSON.stringify({ $type: 'broadcast', text })
          await request(`${board.url}/sw/signals`, {
            dispatcher,
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: 'Bearer honest-publisher' },
            body,
          })
            .then((r) => r.body.dump())
            .then(
              () => published++,
              () => {},
            )
          await sleep(1000 / o.publishPerSecond)
        }
      })(),
    )
  }
  for (let i = 0; i < o.readers; i++)
    tasks.push(loop('read', () => `${o.agg}/sw/${o.boards[i % o.boards.length]!.authority}/sw/signals?limit=20`, as()))
  for (let i = 0; i < o.searchers; i++) tasks.push(loop('search', () => `${o.agg}/search/signals?q=honest&limit=20`, as()))
  tasks.push(follow(`${o.agg}/search/signals`, 'indexed', as(), 'q=honest&'))
  return {
    samples,
    failures,
    get published() {
      return published
    },
    async stop() {
      running = false
      await dispatcher.destroy()
      await Promise.allSettled(tasks)
    },
  }
}
