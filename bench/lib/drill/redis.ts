import type { Hosts } from './hosts.js'

// The drills' Redis (fleet.ts), on a host of its own.

const REDIS_PORT = 6379

export /** A Redis of the drill's own on its host: no persistence, killed and started again by a drill. */
function redisOn(hosts: Hosts, port = REDIS_PORT) {
  let child: ReturnType<Hosts['spawn']> | null = null
  const args = ['--port', String(port), '--bind', hosts.ip('redis'), '--save', '', '--appendonly', 'no', '--protected-mode', 'no']
  return {
    async start() {
      const c = hosts.spawn('redis', 'redis-server', args, { stdio: ['ignore', 'pipe', 'inherit'] })
      child = c
      let out = ''
      await new Promise<void>((resolve, reject) => {
        c.stdout!.on('data', (d: Buffer) => (out += d) && /Ready to accept connections/.test(out) && resolve())
        c.once('exit', (code) => reject(new Error(`redis-server exited (${code}): ${out.slice(-500)}`)))
      })
    },
    async stop() {
      const c = child
      child = null
      if (!c || c.exitCode !== null || c.signalCode !== null) return
      await new Promise<void>((resolve) => (c.once('exit', () => resolve()), c.kill('SIGKILL')))
    },
  }
}
