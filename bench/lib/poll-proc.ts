import net from 'node:net'

// One process of the fan-out client (bench/lib/pollers.ts): holds `count` long-polls on raw keep-alive
// sockets, each a pre-built GET. On an answer it finds `"nextCursor":` in the body (no JSON parsing),
// records when it arrived and polls again from there at once, as a follower does. A process, not a
// worker thread: this sandbox caps open files per process near 20,000.
// Argument: the JSON of Data. Messages out: {opened}; in {cmd:'report'} → {arrivals, answered, errors, cpu}; {cmd:'stop'}.

interface Data {
  host: string
  port: number
  /** Path up to `cursor=`; the cursor and `&wait=…` are appended. */
  path: string
  cursor: number
  wait: number
  count: number
  /** Set: poller i says it forwards for client number `forwardedFrom + i` (X-Forwarded-For 10.x.y.z), so per-address budgets count each follower on its own. */
  forwardedFrom?: number
}

const d = JSON.parse(process.argv[2]!) as Data
const CURSOR = Buffer.from('"nextCursor":')
const HEADER_END = Buffer.from('\r\n\r\n')
const LENGTH = 'content-length:'
const request = (cursor: number, extra = '') => Buffer.from(`GET ${d.path}${cursor}&wait=${d.wait} HTTP/1.1\r\nHost: ${d.host}\r\n${extra}\r\n`)
/** Requests by cursor: every follower of one feed polls the same bytes. */
const built = new Map<number, Buffer>()
const sharedRequest = (cursor: number) => {
  let b = built.get(cursor)
  if (!b) built.set(cursor, (b = request(cursor)))
  return b
}
const forwarded = (n: number) => `X-Forwarded-For: 10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}\r\n`
/** Poller `i`'s request at `cursor`: the shared bytes, or its own when it forwards for a client of its own. */
const requestFor = (i: number) => {
  if (d.forwardedFrom === undefined) return sharedRequest
  const header = forwarded(d.forwardedFrom + i)
  let last = -1
  let bytes = Buffer.alloc(0)
  return (cursor: number) => (cursor === last ? bytes : ((last = cursor), (bytes = request(cursor, header))))
}

/** Arrival times (performance.timeOrigin-based ms, comparable across threads) of answers with signals. */
let arrivals: number[] = []
let answered = 0
let errors = 0
/** Non-2xx answers by status code ("0": the socket failed). */
const codes: Record<string, number> = {}

function poller(i: number) {
  const requestAt = requestFor(i)
  let buf: Buffer | null = null
  const socket = net.connect({ host: d.host, port: d.port, noDelay: true })
  socket.on('connect', () => (socket.write(requestAt(d.cursor)), opened()))
  socket.on('data', (chunk: Buffer) => {
    buf = buf ? Buffer.concat([buf, chunk]) : chunk
    for (;;) {
      const end: number = buf.indexOf(HEADER_END)
      if (end < 0) return
      const head: string = buf.toString('latin1', 0, end).toLowerCase()
      const at: number = head.indexOf(LENGTH)
      const length: number = at < 0 ? 0 : parseInt(head.slice(at + LENGTH.length), 10)
      const total: number = end + 4 + length
      if (buf.length < total) return
      const status = head.charCodeAt(9) === 0x32 // "HTTP/1.1 2xx"
      const body = buf.subarray(end + 4, total)
      buf = buf.length > total ? buf.subarray(total) : null
      answered++
      if (!status) (errors++, (codes[head.slice(9, 12)] = (codes[head.slice(9, 12)] ?? 0) + 1))
      const c = body.indexOf(CURSOR)
      const next = c < 0 ? d.cursor : parseInt(body.toString('latin1', c + CURSOR.length, c + CURSOR.length + 20), 10)
      if (body.length > 60) arrivals.push(performance.timeOrigin + performance.now()) // a page with signals
      if (!stopping) socket.write(requestAt(next))
      if (!buf) return
    }
  })
  socket.on('error', () => void (errors++, (codes['0'] = (codes['0'] ?? 0) + 1)))
  sockets.push(socket)
}

let open = 0
const opened = () => {
  if (++open === d.count) process.send!({ opened: open })
}
let stopping = false
const sockets: net.Socket[] = []

// open gradually: stay under the listen backlog
for (let i = 0; i < d.count; i++) {
  poller(i)
  if (i % 200 === 199) await new Promise((r) => setTimeout(r, 10))
}

process.on('message', (m: { cmd: string }) => {
  if (m.cmd === 'report') {
    process.send!({ arrivals, answered, errors, codes, cpu: process.cpuUsage() })
    arrivals = []
  } else if (m.cmd === 'stop') {
    stopping = true
    for (const s of sockets) s.destroy()
    process.exit(0)
  }
})
