import net from 'node:net'

// One process of the fan-out client (bench/lib/pollers.ts): holds `count` long-polls on raw keep-alive
// sockets, each a pre-built GET. On an answer it finds `"nextCursor":` in the body (no JSON parsing),
// records when it arrived and polls again from there at once, as a follower does. A process, not a
// worker thread: this sandbox caps open files per process near 20,000.
// Argument: the JSON of Data. Messages out: {opened}; in {cmd:'report'} → {arrivals, answered, errors, refusals, reasons, cpu};
// {cmd:'recorded'} → {recorded} (first deliveries so far: a number, cheap to ask while answers arrive);
// {cmd:'tracked'} → {tracked: [n, arrival times][], duplicates}; {cmd:'stop'}.

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
  /** Set: each signal's payload carries `"<track>":<n>`; every (n, arrival) pair is recorded, for per-signal latency and missed pairs. */
  track?: string
  /** With `track`: signals are numbered 0 … trackCount - 1. */
  trackCount?: number
}

const d = JSON.parse(process.argv[2]!) as Data
const CURSOR = Buffer.from('"nextCursor":')
const HEADER_END = Buffer.from('\r\n\r\n')
const LENGTH = 'content-length:'
const request = (cursor: number, extra = '') =>
  Buffer.from(`GET ${d.path}${cursor}&wait=${d.wait} HTTP/1.1\r\nHost: ${d.host}\r\n${extra}\r\n`)
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
const TRACK = d.track ? Buffer.from(`"${d.track}":`) : null
/** With `track`: signal n → the arrival time of its first delivery to each follower; a second delivery is a duplicate. */
const tracked = new Map<number, number[]>()
let duplicates = 0
let recorded = 0
function record(seen: Uint8Array, body: Buffer, at: number) {
  for (let i = body.indexOf(TRACK!); i >= 0; i = body.indexOf(TRACK!, i + TRACK!.length)) {
    const n = parseInt(body.toString('latin1', i + TRACK!.length, i + TRACK!.length + 12), 10)
    if (seen[n]) {
      duplicates++
      continue
    }
    seen[n] = 1
    let times = tracked.get(n)
    if (!times) tracked.set(n, (times = []))
    times.push(at)
    recorded++
  }
}
/**
 * Next polls, written once this turn's answers have all been read and stamped: the client holds
 * thousands of followers in one process, and a write to a loopback socket costs more than reading an
 * answer (the kernel runs the receiving side's TCP in it), so writing each at once would stamp the
 * last answers of a burst late by the writes before them. A follower of its own polls at once; here
 * the next poll leaves within the same turn of the client's event loop.
 */
let polls: Array<[net.Socket, Buffer]> = []
const sendPolls = () => {
  const out = polls
  polls = []
  for (const [socket, bytes] of out) if (!socket.destroyed) socket.write(bytes)
}
function repoll(socket: net.Socket, bytes: Buffer) {
  if (polls.push([socket, bytes]) === 1) setImmediate(sendPolls)
}
let answered = 0
let errors = 0
/** Answers that were not 2xx, by status (0: the connection failed or closed). */
const refusals: Record<number, number> = {}
/** The refusals' error messages ("<status> <message>" → count; a few distinct ones), so a report says which limit refused. */
const reasons: Record<string, number> = {}
const MESSAGE = /"message":"([^"]{0,160})/
function noteReason(status: number, body: Buffer) {
  const key = `${status} ${MESSAGE.exec(body.toString('utf8', 0, 400))?.[1] ?? '(no message)'}`
  if (key in reasons || Object.keys(reasons).length < 8) reasons[key] = (reasons[key] ?? 0) + 1
}
const RETRY_AFTER = 'retry-after:'

const CLOSES = /(^|\r\n)connection:[^\r]*\bclose\b/
const CHUNKED = /(^|\r\n)transfer-encoding:[^\r]*\bchunked\b/
const CRLF = Buffer.from('\r\n')

/**
 * The first whole answer in `buf`, or null until it has arrived: its body by Content-Length, or by
 * chunks (nginx relays a body of unknown length chunked, such as the bare 408 a role sends when a
 * connection's first request is late); none: empty.
 */
function takeAnswer(buf: Buffer): { status: number; head: string; body: Buffer; rest: Buffer | null } | null {
  const end = buf.indexOf(HEADER_END)
  if (end < 0) return null
  const head = buf.toString('latin1', 0, end).toLowerCase()
  const status = parseInt(head.slice(9, 12), 10)
  let at = end + 4
  let body: Buffer
  if (CHUNKED.test(head)) {
    const parts: Buffer[] = []
    for (;;) {
      const line = buf.indexOf(CRLF, at)
      if (line < 0) return null
      const size = parseInt(buf.toString('latin1', at, line), 16)
      if (buf.length < line + 2 + size + 2) return null
      if (size === 0) {
        at = line + 4 // no trailers
        break
      }
      parts.push(buf.subarray(line + 2, line + 2 + size))
      at = line + 2 + size + 2
    }
    body = Buffer.concat(parts)
  } else {
    const l = head.indexOf(LENGTH)
    const length = l < 0 ? 0 : parseInt(head.slice(l + LENGTH.length), 10)
    if (buf.length < at + length) return null
    body = buf.subarray(at, at + length)
    at += length
  }
  return { status, head, body, rest: buf.length > at ? buf.subarray(at) : null }
}

/**
 * Follower `i`: polls from its cursor, again at once on an answer. A refusal (429, 503) is retried
 * from the same cursor after its Retry-After (1 s without one), and a closed connection is reopened,
 * as a client that keeps its cursor does.
 */
function poller(i: number) {
  const requestAt = requestFor(i)
  const seen = new Uint8Array(d.trackCount ?? 0)
  let cursor = d.cursor
  let first = true
  const connect = () => {
    let buf: Buffer | null = null
    const socket = net.connect({ host: d.host, port: d.port, noDelay: true })
    sockets.add(socket)
    socket.on('connect', () => {
      socket.write(requestAt(cursor))
      if (first) {
        first = false
        opened()
      }
    })
    socket.on('data', (chunk: Buffer) => {
      buf = buf ? Buffer.concat([buf, chunk]) : chunk
      for (;;) {
        const answer = takeAnswer(buf)
        if (!answer) return
        const { status, head, body } = answer
        buf = answer.rest
        answered++
        if (status >= 200 && status < 300) {
          const c = body.indexOf(CURSOR)
          if (c >= 0) cursor = parseInt(body.toString('latin1', c + CURSOR.length, c + CURSOR.length + 20), 10)
          if (body.length > 60) {
            const arrival = performance.timeOrigin + performance.now() // a page with signals
            arrivals.push(arrival)
            if (TRACK) record(seen, body, arrival)
          }
          if (!stopping) repoll(socket, requestAt(cursor))
        } else {
          errors++
          refusals[status] = (refusals[status] ?? 0) + 1
          noteReason(status, body)
          // an answer that closes its connection is retried on the next one ('close' reconnects)
          if (CLOSES.test(head)) return void socket.destroy()
          const r = head.indexOf(RETRY_AFTER)
          const wait = r < 0 ? 1 : Math.min(5, parseInt(head.slice(r + RETRY_AFTER.length), 10) || 1)
          setTimeout(() => !stopping && !socket.destroyed && socket.write(requestAt(cursor)), wait * 1000 * (0.5 + Math.random()))
        }
        if (!buf) return
      }
    })
    socket.on('error', () => {})
    socket.on('close', () => {
      sockets.delete(socket)
      if (stopping) return
      errors++
      refusals[0] = (refusals[0] ?? 0) + 1
      setTimeout(connect, 200 + Math.random() * 800) // reopen, and poll again from the cursor
    })
  }
  connect()
}

let open = 0
const opened = () => {
  if (++open === d.count) process.send!({ opened: open })
}
let stopping = false
const sockets = new Set<net.Socket>()

// open gradually: stay under the listen backlog
for (let i = 0; i < d.count; i++) {
  poller(i)
  if (i % 200 === 199) await new Promise((r) => setTimeout(r, 10))
}

process.on('message', (m: { cmd: string }) => {
  if (m.cmd === 'report') {
    process.send!({ arrivals, answered, errors, refusals, reasons, cpu: process.cpuUsage() })
    arrivals = []
  } else if (m.cmd === 'recorded') {
    process.send!({ recorded })
  } else if (m.cmd === 'tracked') {
    process.send!({ tracked: [...tracked], duplicates })
    tracked.clear()
  } else if (m.cmd === 'stop') {
    stopping = true
    for (const s of sockets) s.destroy()
    process.exit(0)
  }
})
