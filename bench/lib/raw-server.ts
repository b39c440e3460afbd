import http from 'node:http'

// The floor for long-poll fan-out on this machine: plain node:http holding requests and answering
// them all with one shared buffer, nothing else. bench/run.ts compares the reader against it.
// GET /hold waits; GET /count says how many wait; POST /release answers them all.

const held: http.ServerResponse[] = []
const body = Buffer.from('{"signals":[],"nextCursor":0,"serverNow":"1970-01-01T00:00:00.000Z"}')
const server = http.createServer(async (req, res) => {
  if (req.url === '/hold') return void held.push(res)
  if (req.url === '/count') return void res.end(String(held.length))
  const t0 = performance.now()
  const all = held.splice(0)
  for (let i = 0; i < all.length; i++) {
    all[i]!.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length }).end(body)
    if (i % 500 === 499) await new Promise((r) => setImmediate(r))
  }
  res.end(String(performance.now() - t0))
})
server.listen(Number(process.argv[2]), '127.0.0.1', () => process.send?.('ready'))
process.on('SIGTERM', () => process.exit(0))
