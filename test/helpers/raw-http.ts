import net from 'node:net'

/** A keep-alive HTTP/1.1 connection on a raw socket that collects whole answers (framed by Content-Length). */
export function rawConnection(port: number) {
  const socket = net.connect({ host: '127.0.0.1', port, noDelay: true })
  let buf = Buffer.alloc(0)
  const answers: Buffer[] = []
  socket.on('data', (c: Buffer) => {
    buf = Buffer.concat([buf, c])
    for (;;) {
      const end = buf.indexOf('\r\n\r\n')
      if (end < 0) return
      const length = Number(/content-length: (\d+)/i.exec(buf.toString('latin1', 0, end))?.[1] ?? 0)
      if (buf.length < end + 4 + length) return
      answers.push(buf.subarray(0, end + 4 + length))
      buf = buf.subarray(end + 4 + length)
    }
  })
  socket.on('error', () => {})
  let closed = false
  const whenClosed = new Promise<void>((resolve) => socket.once('close', () => ((closed = true), resolve())))
  return {
    socket,
    answers,
    /** Writes a GET with Host and Origin, plus `extra` header lines (each ending in \r\n). */
    get: (path: string, extra = '') =>
      socket.write(`GET ${path} HTTP/1.1\r\nHost: board.example\r\nOrigin: https://viewer.example\r\n${extra}\r\n`),
    write: (raw: string | Buffer) => socket.write(raw),
    get closed() {
      return closed
    },
    whenClosed,
    end: () => socket.destroy(),
  }
}
export type RawConnection = ReturnType<typeof rawConnection>

/** An answer as text with the Date header's value and serverNow blanked (they differ by the second). */
export const comparable = (b: Buffer) =>
  b
    .toString('latin1')
    .replace(/\r\nDate: [^\r]*/, '\r\nDate: -')
    .replace(/"serverNow":"[^"]*"/, '"serverNow":"-"')

export const statusOf = (b: Buffer) => Number(b.toString('latin1', 9, 12))
export const bodyOf = (b: Buffer) => JSON.parse(b.toString('utf8', b.indexOf('\r\n\r\n') + 4))
