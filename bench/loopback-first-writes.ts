import { fork } from 'node:child_process'
import net from 'node:net'
import { round } from './lib/load.js'
import { projectPath } from '../libs/shared/paths.js'

// npm run bench:loopback-first-writes: what the kernel charges a writer for the first answers on
// new loopback connections, without Wire. One process accepts BENCH_CONNECTIONS (1,000) connections
// from a client process; each round it waits until every connection has sent a byte (a follower's
// poll), then writes one 600-byte answer to each in a plain loop and prints the loop's CPU per write
// (process.cpuUsage; its user/system split is coarse at this size). Three times: on fresh
// connections (the process's first writes), on other fresh connections once the code is warm, and
// on others after BENCH_WARM_ROUNDS (4) rounds of one-byte answers, so that only the connections'
// first answers differ. What it shows fits TCP's quick-ack: a new connection's receiver acknowledges
// its first segments at once instead of letting the acknowledgement ride on its next request, and on
// loopback that acknowledgement is processed inside the sender's write.

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 1000)
const ROUNDS = 8
const WARM_ROUNDS = Number(process.env.BENCH_WARM_ROUNDS ?? 4)
const ANSWER = Buffer.alloc(600, 'a')

function run(warmRounds: number): Promise<string[]> {
  return new Promise((resolve) => {
    const sockets: net.Socket[] = []
    const lines: string[] = []
    let polled = 0
    let turn = -warmRounds
    const server = net.createServer((s) => {
      s.setNoDelay(true) // as node's http server and Wire's fast path
      sockets.push(s)
      s.on('data', () => {
        if (++polled < CONNECTIONS) return
        polled = 0
        setTimeout(answer, 50) // the next signal, 50 ms later (20/s)
      })
    })
    const answer = () => {
      if (turn === ROUNDS) {
        client.kill()
        for (const s of sockets) s.destroy()
        server.close()
        return resolve(lines)
      }
      const body = turn < 0 ? 'w' : ANSWER
      const c0 = process.cpuUsage()
      for (const s of sockets) s.write(body)
      const c = process.cpuUsage(c0)
      if (turn >= 0)
        lines.push(
          `round ${turn}: ${round((c.user + c.system) / CONNECTIONS, 2)} µs CPU per write (system ${round(c.system / CONNECTIONS, 2)})`,
        )
      turn++
    }
    let client: ReturnType<typeof fork>
    server.listen(0, '127.0.0.1', () => {
      client = fork(projectPath('dist/bench/lib/loopback-client.js'), [
        String((server.address() as net.AddressInfo).port),
        String(CONNECTIONS),
      ])
    })
  })
}

const runs: Array<[string, number]> = [
  ['fresh connections, the first writes of this process', 0],
  ['other fresh connections, the code now warm', 0],
  [`other fresh connections after ${WARM_ROUNDS} rounds of one-byte answers`, WARM_ROUNDS],
]
for (const [label, warm] of runs) {
  console.log(`${CONNECTIONS} ${label}; one 600-byte answer each per round:`)
  for (const l of await run(warm)) console.log(`  ${l}`)
}
