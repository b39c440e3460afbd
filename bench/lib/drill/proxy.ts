import { createConnection, createServer, type Socket } from 'node:net'

// A link the drills can make misbehave without closing it: a TCP proxy on the client host that
// every byte of one role's connections to a service passes through. `stall` stops forwarding both
// ways and closes nothing (each side's kernel still acknowledges the proxy's packets, so no
// keepalive finds it: only a deadline does); `stallAt(text)` lets everything through until a
// client sends `text` (a statement such as `commit`), then stalls the link there, mid-transaction;
// `delay(ms)` holds every chunk that long each way (a slow link). `pass` lets everything through
// again, what was held first, in order.

export interface LinkProxy {
  /** host:port to connect to instead of the service. */
  readonly host: string
  readonly port: number
  pass(): void
  stall(): void
  /** Stalls the link when a client next sends `bytes` (e.g. `pgQuery('commit')`), before they go out. */
  stallAt(bytes: Buffer): void
  delay(ms: number): void
  /** Ends every connection through the link at once (a reset, as a restarted service or NAT would); new ones pass. */
  drop(): void
  /** Chunks a stall holds now (what the peers sent that did not get through). */
  held(): number
  close(): Promise<void>
}

type Mode = { kind: 'pass' } | { kind: 'stall' } | { kind: 'stallAt'; text: Buffer } | { kind: 'delay'; ms: number }

/** A PostgreSQL simple-query message, as `pg` sends a statement without parameters ('Q', length, text, NUL). */
export function pgQuery(text: string): Buffer {
  const body = Buffer.from(`${text}\0`)
  const head = Buffer.alloc(5)
  head.write('Q')
  head.writeInt32BE(4 + body.length, 1)
  return Buffer.concat([head, body])
}

export async function linkProxy(listenHost: string, target: { host: string; port: number }): Promise<LinkProxy> {
  let mode: Mode = { kind: 'pass' }
  const open = new Set<Socket>()
  /** What a stalled link holds, in order, per direction. */
  const held = new Set<Array<() => void>>()
  const forward = (from: Socket, to: Socket, watch: boolean) => {
    const queue: Array<() => void> = []
    held.add(queue)
    let due = 0 // a delayed chunk never overtakes the one before it
    const carry = (send: () => void) => {
      if (mode.kind === 'stall' || queue.length) return void queue.push(send)
      const at = Math.max(Date.now() + (mode.kind === 'delay' ? mode.ms : 0), due)
      if (at <= Date.now()) return send()
      due = at
      setTimeout(send, at - Date.now())
    }
    from.on('data', (chunk: Buffer) => {
      if (watch && mode.kind === 'stallAt' && chunk.includes(mode.text)) mode = { kind: 'stall' }
      carry(() => void (to.destroyed || to.write(chunk)))
    })
    // a stalled link carries no FIN or RST either: one side's close reaches the other when it flows
    from.on('end', () => carry(() => to.end()))
    from.on('error', () => {})
    from.on('close', () => {
      open.delete(from)
      carry(() => (to.destroy(), held.delete(queue)))
    })
  }
  const server = createServer((client) => {
    const upstream = createConnection(target.port, target.host)
    open.add(client).add(upstream)
    forward(client, upstream, true)
    forward(upstream, client, false)
  })
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, listenHost, resolve))
  const port = (server.address() as { port: number }).port
  return {
    host: listenHost,
    port,
    pass() {
      mode = { kind: 'pass' }
      for (const q of held) for (const send of q.splice(0)) send()
    },
    stall: () => void (mode = { kind: 'stall' }),
    stallAt: (bytes) => void (mode = { kind: 'stallAt', text: bytes }),
    delay: (ms) => void (mode = { kind: 'delay', ms }),
    held: () => [...held].reduce((n, q) => n + q.length, 0),
    drop: () => {
      for (const s of open) s.destroy()
    },
    close: () => {
      for (const s of open) s.destroy()
      return new Promise<void>((r) => server.close(() => r()))
    },
  }
}
