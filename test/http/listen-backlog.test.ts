import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import t from 'tap'
import { fleetSchema, startRole } from '../helpers/fleet.js'
import { TEST_DATABASE_URL, TEST_REDIS_URL } from '../helpers/services.js'

// A role listens with HTTP_LISTEN_BACKLOG as its accept queue (node's own default is 511). With
// 511, 10,000 followers reconnecting through nginx overflowed the readers' queues, nginx's connects
// timed out and it marked the readers down (bench/results/nginx-front.md). The queue a
// listening socket was given is what `ss -ltn` shows as its Send-Q (Linux caps it at somaxconn).

const somaxconn = Number(readFileSync('/proc/sys/net/core/somaxconn', 'utf8'))

/** The accept queue the kernel gave the socket listening on `port`. */
function backlogOf(port: number): number {
  const line =
    execFileSync('ss', ['-ltnH', `sport = :${port}`], { encoding: 'utf8' })
      .trim()
      .split('\n')[0] ?? ''
  const sendQ = line.split(/\s+/)[2] // State Recv-Q Send-Q Local Peer
  return Number(sendQ)
}

t.test('a role listens with HTTP_LISTEN_BACKLOG, 4096 unless set', async (t) => {
  const env = { DATABASE_URL: TEST_DATABASE_URL, REDIS_URL: TEST_REDIS_URL, WIRE_PG_SCHEMA: fleetSchema(t) }
  const byDefault = await startRole(t, 'writer', env)
  t.equal(
    backlogOf(Number(new URL(byDefault.url).port)),
    Math.min(4096, somaxconn),
    "the default: 4096 (as far as somaxconn allows), not node's 511",
  )
  const set = await startRole(t, 'reader', { ...env, HTTP_LISTEN_BACKLOG: '1000' })
  t.equal(backlogOf(Number(new URL(set.url).port)), Math.min(1000, somaxconn), 'the setting')
})
