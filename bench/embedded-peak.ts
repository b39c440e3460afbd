import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { projectPath } from '../libs/shared/paths.js'
import { freePort } from './lib/procs.js'

// node dist/bench/embedded-peak.js: the embedded single process's peak RSS when it starts, first
// start (a fresh data directory: initdb) then a second start on it, for each value of
// WIRE_EMBEDDED_WASM_OPTIMIZE (BENCH_PEAK_SETTINGS, default "0,1"), alternating, BENCH_PEAK_ROUNDS (2)
// rounds. Peak: the creation's own line on a first start (the process creates the database, then runs
// itself again), VmHWM of the serving process 3 s after it is live; rest: VmRSS then.
// BENCH_PEAK_BOARDS (default "0"): WIRE_NETWORK_BOARDS values, each also run (0: the single board;
// N: a network in one process, the identity network, an aggregator and N boards on one database).

const SETTINGS = (process.env.BENCH_PEAK_SETTINGS ?? '0,1').split(',')
const ROUNDS = Number(process.env.BENCH_PEAK_ROUNDS ?? 2)
const BOARDS = (process.env.BENCH_PEAK_BOARDS ?? '0').split(',')
const status = (pid: number, k: string) =>
  Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024

async function start(dir: string, optimize: string, boards: string): Promise<string> {
  // a network's boards listen on SERVER_PORT and the ports after it: a free port, and (most likely) the next ones;
  // the aggregator's and the identity network's ports outside that run
  const base = await freePort()
  const another = async (): Promise<number> => {
    const p = await freePort()
    return p >= base && p < base + 10 ? another() : p
  }
  const ports = {
    SERVER_PORT: String(base),
    WIRE_NETWORK_AGGREGATOR_PORT: String(await another()),
    WIRE_NETWORK_IDENTITY_PORT: String(await another()),
  }
  const env: Record<string, string | undefined> = {
    ...process.env,
    ...ports,
    WIRE_NETWORK_BOARDS: boards,
    WIRE_DATA_DIR: dir,
    LOG_LEVEL: 'warn',
    WIRE_CONFIG: '/nonexistent',
    WIRE_EMBEDDED_WASM_OPTIMIZE: optimize,
  }
  delete env.DATABASE_URL
  delete env.REDIS_URL
  const t0 = Date.now()
  const p = spawn(projectPath('node_modules/.bin/node'), [projectPath('dist/apps/server/main.js')], {
    env: env as NodeJS.ProcessEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  p.stderr.on('data', (d) => (out += d))
  await new Promise<void>((res, rej) => {
    p.stdout.on('data', (d) => ((out += d), /is live (at|in this process)/.test(out) && res()))
    p.once('exit', (code) => rej(new Error(`the server exited (${code}) before it was live:\n${out}`)))
  })
  const live = Date.now() - t0
  await new Promise((r) => setTimeout(r, 3000))
  const [hwm, rss] = [status(p.pid!, 'VmHWM'), status(p.pid!, 'VmRSS')]
  p.kill('SIGTERM')
  await new Promise((r) => p.on('exit', r))
  const created = /peak RSS (\d+) MiB/.exec(out)?.[1]
  return `${created ? `creating ${created} MiB, then ` : ''}peak ${hwm.toFixed(0)} MiB, rest ${rss.toFixed(0)} MiB, live after ${(live / 1000).toFixed(1)} s`
}

for (let round = 1; round <= ROUNDS; round++)
  for (const boards of BOARDS)
    for (const optimize of SETTINGS) {
      const dir = mkdtempSync(join(tmpdir(), 'wire-peak-'))
      const what = `round ${round}${boards === '0' ? '' : ` WIRE_NETWORK_BOARDS=${boards}`} WIRE_EMBEDDED_WASM_OPTIMIZE=${optimize}`
      try {
        process.stdout.write(`${what} first:  ${await start(dir, optimize, boards)}\n`)
        process.stdout.write(`${what} second: ${await start(dir, optimize, boards)}\n`)
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    }
