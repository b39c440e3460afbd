import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { bearerToken } from '../libs/shared/auth/index.js'
import { percentile, round } from './lib/load.js'
import { startRole } from './lib/procs.js'

// node dist/bench/authorization-header.js (after npm run build): what the pathological
// Authorization header ("Bearer a", 15,900 spaces, "b") costs the parser, next to the backtracking
// pattern it replaced, and end to end on a real `npm start` process (embedded database): honest
// publish latency while the same process answers a stream of such headers. A few seconds.

const PATHOLOGICAL = `Bearer a${' '.repeat(15_900)}b`
const NEAR_CAP = `Bearer a${' '.repeat(4_000)}b` // under the length cap: parsed, refused for the space inside
const HONEST = 'Bearer honest-agent-token-0123456789'
const OLD = /^\s*bearer\s+(.+?)\s*$/i
const log = (s: string) => process.stdout.write(`${s}\n`)

function perCall(label: string, f: () => unknown, n: number) {
  const t0 = process.hrtime.bigint()
  for (let i = 0; i < n; i++) {
    try {
      f()
    } catch {
      // refusals are the point
    }
  }
  log(`${label.padEnd(46)} ${round(Number(process.hrtime.bigint() - t0) / n / 1000, 2)} µs/call`)
}

perCall('parser, honest header', () => bearerToken(HONEST), 100_000)
perCall('parser, 15,900 spaces (over the cap)', () => bearerToken(PATHOLOGICAL), 100_000)
perCall('parser, 4,000 spaces (under the cap)', () => bearerToken(NEAR_CAP), 10_000)
perCall('old pattern, 4,000 spaces', () => OLD.exec(NEAR_CAP), 20)
perCall('old pattern, 15,900 spaces', () => OLD.exec(PATHOLOGICAL), 5)

const dir = mkdtempSync(join(tmpdir(), 'wire-bench-auth-'))
const port = 20_000 + Math.floor(Math.random() * 20_000)
const server = await startRole('server', port, {
  WIRE_DATA_DIR: dir,
  PUBLISH_RATE_LIMIT_MAX: '1000000',
  PUBLISH_ADDRESS_RATE_LIMIT_MAX: '0',
  PUBLISH_ATTEMPT_RATE_LIMIT_MAX: '0',
  NEW_IDENTITY_RATE_LIMIT_MAX: '0',
})
try {
  const publish = async (authorization: string) => {
    const t0 = performance.now()
    const res = await fetch(`${server.url}/sw/signals`, {
      method: 'POST',
      headers: { authorization, 'content-type': 'application/json' },
      body: '{"$type":"bench"}',
    })
    await res.arrayBuffer()
    return { ms: performance.now() - t0, status: res.status }
  }
  const honest = async (n: number) => {
    const ms: number[] = []
    for (let i = 0; i < n; i++) ms.push((await publish(HONEST)).ms)
    return ms.sort((a, b) => a - b)
  }
  await honest(20) // warm-up
  const quiet = await honest(200)
  let attacking = true
  let attacks = 0
  const statuses = new Set<number>()
  const attacker = (async () => {
    while (attacking) {
      statuses.add((await publish(PATHOLOGICAL)).status)
      attacks++
    }
  })()
  const loud = await honest(200)
  attacking = false
  await attacker
  log(`honest publish p50/p99 alone:        ${round(percentile(quiet, 50))} / ${round(percentile(quiet, 99))} ms`)
  log(
    `honest publish p50/p99 under attack: ${round(percentile(loud, 50))} / ${round(percentile(loud, 99))} ms (${attacks} attack requests, answered ${[...statuses].join(', ')})`,
  )
} finally {
  await server.stop()
  rmSync(dir, { recursive: true, force: true })
}
