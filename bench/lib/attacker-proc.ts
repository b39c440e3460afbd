import { Agent, request } from 'undici'
import { startHostileBoard, type HostileBoard, type Misbehaviour } from './hostile-board.js'

// One attacker of bench/aggregator-attack.ts, in a process of its own (as it would be on another
// machine, so its work does not stall the honest clients' event loop): runs `boards` hostile boards
// of one kind (bench/lib/hostile-board.ts), registers them with the aggregator, and sends
// `concurrency` proxied requests at once to them from `addresses` client addresses, each again as
// soon as the last ended (after a refusal, 250 ms later). Every `cycleMs`, a board the aggregator
// marked (over its quota, or a page too large) is replaced by a fresh one, registered anew: an
// attacker with many boards keeps the follower busy. Bodies are read raw (a gzip bomb is not inflated here).
// Argument: the JSON of Data. Messages out: {ready: authorities}; then {report} after {cmd: 'stop'}.

interface Data {
  agg: string
  mode: Misbehaviour
  boards: number
  concurrency: number
  addresses: number
  cycleMs: number
  hugeBytes: number
  stallBytes: number
}

const d = JSON.parse(process.argv[2]!) as Data
const steps: Array<() => unknown> = []
const dispatcher = new Agent({ connections: 1024, headersTimeout: 120_000, bodyTimeout: 120_000 })
const stop = new AbortController()
const statuses: Record<string, number> = {}
const count = (k: string | number) => void (statuses[k] = (statuses[k] ?? 0) + 1)
let bytes = 0
const every: HostileBoard[] = []
const boards: HostileBoard[] = []
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

async function fresh(): Promise<HostileBoard> {
  const b = await startHostileBoard({ teardown: (s) => void steps.push(s) }, d.mode, {
    hugeBytes: d.hugeBytes,
    stallBytes: d.stallBytes,
    trickleMs: 500,
  })
  const r = await request(`${d.agg}/registry/boards`, {
    dispatcher,
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer attacker-token', 'x-forwarded-for': '10.66.255.1' },
    body: JSON.stringify({ url: b.url }),
  })
  const text = await r.body.text()
  if (r.statusCode !== 201) throw new Error(`register ${b.url}: ${r.statusCode} ${text}`)
  every.push(b)
  return b
}

async function attack(i: number) {
  const address = `10.66.0.${(i % d.addresses) + 1}`
  while (!stop.signal.aborted) {
    const b = boards[i % boards.length]!
    try {
      const res = await request(`${d.agg}/sw/${b.authority}/sw/signals?limit=100`, {
        dispatcher,
        headers: { 'x-forwarded-for': address },
        signal: stop.signal,
      })
      count(res.statusCode)
      for await (const c of res.body) bytes += (c as Buffer).length
      if (res.statusCode >= 300) await sleep(250)
    } catch {
      if (!stop.signal.aborted) count('cut'), await sleep(250)
    }
  }
}

const pause = (ms: number) =>
  new Promise<void>((r) => {
    const t = setTimeout(r, ms)
    stop.signal.addEventListener('abort', () => (clearTimeout(t), r()), { once: true })
  })

async function cycle() {
  while (!stop.signal.aborted) {
    await pause(d.cycleMs)
    for (const [k, b] of boards.entries()) {
      if (stop.signal.aborted) return
      const r = await request(`${d.agg}/registry/boards/${b.authority}`, { dispatcher }).then(
        (r) => r.body.json() as Promise<{ board?: { overQuota: unknown } }>,
        () => null,
      )
      if (!r?.board?.overQuota) continue
      boards[k] = await fresh()
      count('fresh board')
      void b.close()
    }
  }
}

for (let i = 0; i < d.boards; i++) boards.push(await fresh())
process.send!({ ready: boards.map((b) => b.authority) })
const running = [...Array.from({ length: d.concurrency }, (_, i) => attack(i)), cycle()]
process.on('message', async (m: { cmd?: string }) => {
  if (m.cmd !== 'stop') return
  stop.abort()
  await Promise.allSettled(running)
  const pages = every.reduce((n, b) => n + b.followed, 0)
  process.send!({ report: { statuses, bytes, authorities: every.map((b) => b.authority), pages } }, () => {
    void Promise.allSettled(steps.map((s) => s())).then(() => process.exit(0))
  })
})
