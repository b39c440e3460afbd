import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { projectPath } from '../../libs/shared/paths.js'

// The fleet's front for the benches: Debian's nginx serving deploy/nginx/wire-fleet.conf and
// wire-fleet-upstreams.conf as shipped, with only their addresses filled in (as test/deploy/nginx.ts
// does for the tests): GETs go to the readers, publishes to the writer, and nginx appends the
// address it sees to X-Forwarded-For. The wrapper around them is the bench's: its own prefix, no
// access log, and room for every follower's two connections (client side, reader side).

const TICKS_PER_SECOND = 100

/** Replaces every match, failing when there is none: a change to the shipped file must not pass silently. */
function replaced(text: string, from: RegExp, to: string): string {
  if (!from.test(text)) throw new Error(`deploy/nginx no longer has ${from}`)
  return text.replace(new RegExp(from.source, `${from.flags.replace('g', '')}g`), to)
}

/** The shipped server block on a loopback port. */
const server = (port: number) =>
  replaced(
    replaced(readFileSync(projectPath('deploy/nginx/wire-fleet.conf'), 'utf8'), /^( *)listen 80;$/m, `$1listen 127.0.0.1:${port};`),
    /^ *listen \[::\]:80;\n/m,
    '',
  )

/**
 * The shipped upstream blocks with their `server` lines replaced by these ports (every block, its other
 * lines as shipped but for the polls' `keepalive` (wire_polls) when `readerKeepalive` is given).
 */
function upstreams(ports: Record<string, number[]>, readerKeepalive?: number): string {
  const text = readFileSync(projectPath('deploy/nginx/wire-fleet-upstreams.conf'), 'utf8')
  return text.replace(/^upstream (\w+) \{\n([\s\S]*?)^\}/gm, (_, name: string, body: string) => {
    const list = ports[name]
    if (!list) throw new Error(`the bench has no ports for upstream ${name}`)
    const rest = body.replace(/^ *server .*\n/gm, '')
    const kept =
      name === 'wire_polls' && readerKeepalive !== undefined
        ? replaced(rest, /^( *)keepalive \d+;$/m, `$1keepalive ${readerKeepalive};`)
        : rest
    const params = / *server \S+?((?: [^;\n]+)?);/.exec(body)?.[1] ?? '' // the shipped lines' parameters (max_fails=0)
    return `upstream ${name} {\n${list.map((p) => `    server 127.0.0.1:${p}${params};\n`).join('')}${kept}}`
  })
}

function cpuOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(f[11]) + Number(f[12])) / TICKS_PER_SECOND
}

/** nginx's master and its workers (the processes whose parent it is). */
function family(master: number): number[] {
  const kids = readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((d) => {
      try {
        const s = readFileSync(`/proc/${d}/stat`, 'utf8')
        return Number(s.slice(s.lastIndexOf(')') + 2).split(' ')[1]) === master
      } catch {
        return false
      }
    })
  return [master, ...kids.map(Number)]
}

/** nginx's error lines counted by what they say (the text after `*<connection> `, up to the first comma or parenthesis). */
function errorKinds(file: string): Record<string, number> {
  const kinds: Record<string, number> = {}
  if (!existsSync(file)) return kinds
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const m = /\[error\] [^*]*\*\d+ ([^,(]+)/.exec(line)
    if (m) kinds[m[1]!.trim()] = (kinds[m[1]!.trim()] ?? 0) + 1
  }
  return kinds
}

export interface Front {
  url: string
  /** Worker processes nginx runs. */
  workers: number
  /** CPU seconds nginx (master and workers) has spent, from /proc. */
  cpuSeconds(): number
  /** The errors nginx logged so far, by kind ("upstream timed out", "no live upstreams", …) → count. */
  errors(): Record<string, number>
  stop(): Promise<void>
}

/**
 * nginx on `port` in front of a writer and readers (wire_agents, which the benches do not run, points at
 * `unused`). `workers` processes (as `worker_processes auto` gives on this machine), each allowed the
 * sandbox's 20,000 open files: a follower holds one connection to nginx and one from nginx to a reader.
 */
export async function startFront(
  port: number,
  roles: { writers: number[]; readers: number[]; unused: number },
  o: { workers?: number; readerKeepalive?: number } = {},
): Promise<Front> {
  const workers = o.workers ?? 2
  const nginx = ['/usr/sbin/nginx', ...(process.env.PATH ?? '').split(':').map((d) => join(d, 'nginx'))].find((p) => existsSync(p))
  if (!nginx) throw new Error('nginx is not installed: `apt-get install -y nginx`')
  const dir = mkdtempSync(join(tmpdir(), 'wire-bench-nginx-'))
  writeFileSync(join(dir, 'server.conf'), server(port))
  writeFileSync(
    join(dir, 'upstreams.conf'),
    upstreams(
      { wire_writers: roles.writers, wire_readers: roles.readers, wire_polls: roles.readers, wire_agents: [roles.unused] },
      o.readerKeepalive,
    ),
  )
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((k) => `  ${k}_temp_path ${join(dir, k)};`)
  writeFileSync(
    join(dir, 'nginx.conf'),
    [
      'daemon off;',
      `worker_processes ${workers};`,
      'worker_rlimit_nofile 20000;',
      `pid ${join(dir, 'nginx.pid')};`,
      `error_log ${join(dir, 'error.log')} error;`,
      'events { worker_connections 19000; }',
      'http {',
      '  access_log off;',
      ...temp,
      `  include ${join(dir, 'upstreams.conf')};`,
      `  include ${join(dir, 'server.conf')};`,
      '}',
      '',
    ].join('\n'),
  )
  const child = spawn(nginx, ['-p', dir, '-c', join(dir, 'nginx.conf')], { stdio: ['ignore', 'ignore', 'inherit'] })
  const url = `http://127.0.0.1:${port}`
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`nginx exited with ${child.exitCode}`)
    // a poll, which the readers' fast path serves: any other GET would hand the upstream connection nginx
    // keeps to node's server for good (apps/reader/signals-fast-path.ts), and later polls on it with it
    if (
      (await fetch(`${url}/sw/signals?limit=1`).then(
        (r) => r.status,
        () => 0,
      )) === 200
    )
      break
    if (i > 100) throw new Error('nginx not answering')
    await new Promise((r) => setTimeout(r, 100))
  }
  const pids = family(child.pid!)
  if (pids.length < workers + 1) throw new Error(`nginx runs ${pids.length - 1} workers, not ${workers}`)
  return {
    url,
    workers,
    cpuSeconds: () => pids.reduce((s, p) => s + cpuOf(p), 0),
    errors: () => errorKinds(join(dir, 'error.log')),
    stop: () =>
      new Promise<void>((resolve) => {
        const done = () => (rmSync(dir, { recursive: true, force: true }), resolve())
        if (child.exitCode !== null) return done()
        child.once('exit', done)
        child.kill('SIGTERM')
        setTimeout(() => child.kill('SIGKILL'), 5000).unref()
      }),
  }
}
