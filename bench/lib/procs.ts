import { spawn, type ChildProcess } from 'node:child_process'
import { createServer } from 'node:net'
import { readFileSync } from 'node:fs'
import { projectPath } from '../../libs/shared/paths.js'

export interface RoleProc {
  url: string
  child: ChildProcess
  /** CPU seconds (user + system) the process has spent, from /proc: no request to the process, so nothing billed to it. */
  cpuSeconds(): number
  /** Resident memory, bytes, from /proc. */
  rssBytes(): number
  /** The last 64 KiB of its log (LOG_LEVEL warn: its warnings and errors). */
  logTail(): string
  stop(): Promise<void>
}

const TICKS_PER_SECOND = 100 // USER_HZ on Linux

function procStat(pid: number) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ') // fields from the 3rd on
  return { cpuSeconds: (Number(f[11]) + Number(f[12])) / TICKS_PER_SECOND, rssBytes: Number(f[21]) * 4096 }
}

/**
 * Starts a role of the built code and waits until /readyz answers 200. `root`: another checkout
 * whose built dist/ to run instead (before/after comparisons in one run). `nodeArgs`: node's own flags for it.
 * `launcher`: a command that runs node (e.g. valgrind and its options, or `ip netns exec` and a host), keeping the pid; `readyWithinS`: how long
 * it may take to answer /readyz (default 30 s); `host`: the address it listens on (default 127.0.0.1).
 */
export async function startRole(
  role: 'writer' | 'reader' | 'agents' | 'sweeper' | 'server' | 'aggregator' | 'identity',
  port: number,
  env: Record<string, string>,
  root?: string,
  nodeArgs: string[] = [],
  o: { launcher?: string[]; readyWithinS?: number; host?: string } = {},
): Promise<RoleProc> {
  const main = root ? `${root}/dist/apps/${role}/main.js` : projectPath(`dist/apps/${role}/main.js`)
  // BENCH_PROFILE=<role>: that role writes a V8 CPU profile (.cpuprofile) into BENCH_PROFILE_DIR when it stops
  const profile =
    process.env.BENCH_PROFILE === role ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR ?? 'bench/results/profiles'}`] : []
  const [command, ...launcherArgs] = [...(o.launcher ?? []), process.execPath]
  const child = spawn(command!, [...launcherArgs, ...profile, ...nodeArgs, main], {
    env: {
      ...process.env,
      LOG_LEVEL: 'warn',
      SERVER_PORT: String(port),
      SERVER_HOST: o.host ?? '127.0.0.1',
      WIRE_CONFIG: '/nonexistent/board.json',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  let log = ''
  child.stdout!.on('data', (d: Buffer) => void (log = (log + d.toString()).slice(-65_536)))
  const url = `http://${o.host ?? '127.0.0.1'}:${port}`
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`${role} exited with ${child.exitCode}: ${log.slice(-2000)}`)
    if (
      (await fetch(`${url}/readyz`).then(
        (r) => r.status,
        () => 0,
      )) === 200
    )
      break
    if (i > (o.readyWithinS ?? 30) * 10) throw (child.kill('SIGKILL'), new Error(`${role} not ready`))
    await new Promise((r) => setTimeout(r, 100))
  }
  return {
    url,
    child,
    cpuSeconds: () => procStat(child.pid!).cpuSeconds,
    rssBytes: () => procStat(child.pid!).rssBytes,
    logTail: () => log,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve()
        child.once('exit', () => resolve())
        child.kill('SIGTERM')
      }),
  }
}

/** One value from a Prometheus text page: the sum over all series of `name` whose labels contain `labels`. */
export async function metric(url: string, name: string, labels = ''): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text()
  let sum = 0
  for (const line of text.split('\n')) {
    if (!line.startsWith(name) || line.startsWith('#')) continue
    const m = /^([a-zA-Z_:]+)(\{[^}]*\})? ([-0-9.e+]+)$/.exec(line)
    if (m && m[1] === name && (m[2] ?? '').includes(labels)) sum += Number(m[3])
  }
  return sum
}

/** A port nobody listens on now. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer().on('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number }
      srv.close(() => resolve(port))
    })
  })
}

/** A Redis of its own on a free port (no persistence); `cleanup` gets its kill. */
export async function startRedis(cleanup: { add(step: () => unknown): void }): Promise<string> {
  const port = await freePort()
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: 'ignore',
  })
  cleanup.add(() => child.kill('SIGKILL'))
  for (let i = 0; i < 100; i++) {
    const up = await new Promise<boolean>((r) => {
      const s = createServer()
      s.once('error', () => r(true)).listen(port, '127.0.0.1', () => s.close(() => r(false)))
    })
    if (up) break
    await new Promise((r) => setTimeout(r, 50))
  }
  return `redis://127.0.0.1:${port}`
}
