import { spawn } from 'node:child_process'
import { projectPath } from '../../libs/shared/paths.js'

export interface WrkResult {
  perSecond: number
  requests: number
  /** Answers that were not 2xx or 3xx. */
  non2xx: number
  p50: number
  p99: number
  /** CPU the client (wrk) spent, ms of user + system; compare with the run's length to see if it saturated. */
  clientCpuMs: number
  seconds: number
}

const ms = (v: string, unit: string) => Number(v) * ({ us: 0.001, ms: 1, s: 1000, m: 60_000 } as Record<string, number>)[unit]!

/**
 * Runs `wrk` (C, event-driven: far cheaper per request than the Node server it measures) with a
 * Lua script of bench/wrk/ that builds every request once. Its own CPU comes from bash's `times`.
 */
export function wrk(
  url: string,
  script: string,
  o: { seconds: number; connections: number; threads?: number; args?: string[] },
): Promise<WrkResult> {
  const cmd = [
    'wrk',
    `-t${o.threads ?? 1}`,
    `-c${o.connections}`,
    `-d${o.seconds}s`,
    '--latency',
    '-s',
    projectPath('bench/wrk', script),
    url,
    ...(o.args ?? []),
  ]
  return new Promise((resolve, reject) => {
    // `times` prints the children's user and system time after wrk ends
    const child = spawn('bash', ['-c', `${cmd.map((c) => `'${c}'`).join(' ')}; times`], { stdio: ['ignore', 'pipe', 'inherit'] })
    let out = ''
    child.stdout.on('data', (c) => (out += c))
    child.on('error', reject)
    child.on('exit', (code) => {
      const rps = /Requests\/sec:\s+([\d.]+)/.exec(out)
      if (code !== 0 || !rps) return reject(new Error(`wrk failed (${code}): ${out}`))
      const lat = (p: string) => {
        const m = new RegExp(`^\\s+${p}%\\s+([\\d.]+)(us|ms|s|m)`, 'm').exec(out)
        return m ? ms(m[1]!, m[2]!) : NaN
      }
      // `times`: shell user/sys, then children user/sys, as 0m1.234s
      const t = [...out.matchAll(/(\d+)m([\d.]+)s/g)].map((m) => Number(m[1]) * 60 + Number(m[2]))
      const clientCpuMs = t.length >= 4 ? Math.round((t[2]! + t[3]!) * 1000) : NaN
      resolve({
        perSecond: Math.round(Number(rps[1])),
        requests: Number(/(\d+) requests in/.exec(out)?.[1] ?? 0),
        non2xx: Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0),
        p50: lat('50'),
        p99: lat('99'),
        clientCpuMs,
        seconds: o.seconds,
      })
    })
  })
}
