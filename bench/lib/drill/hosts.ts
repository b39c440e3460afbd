import { execFile, spawn, type ChildProcess, type SpawnOptions } from 'node:child_process'
import { readdirSync, rmSync } from 'node:fs'
import { promisify } from 'node:util'

// Hosts of the network drills (docs/operations.md "The network drills"): one network namespace per
// host, each joined by a veth pair to a router namespace, and the machine's own namespace joined
// to it too as the clients' host ("client"). A link between two hosts is cut silently by a rule in
// the router that drops their packets both ways (no FIN, no RST, no ICMP: the peers see nothing,
// new connections hang), and healed by removing it. Only iproute2 is needed; no netem, no
// firewall. Everything is named after this process's pid, so harnesses running at once never
// collide and the next harness removes what a killed one left behind.

const run = promisify(execFile)
const ip = (...args: string[]) => run('ip', args)
const PREFIX = 'wdrill'

export interface Hosts {
  /** The host's address (the client host: this process's own namespace). */
  ip(host: string): string
  /** The command prefix that runs a command on `host` (`ip netns exec` keeps the pid). */
  launcher(host: string): string[]
  /** A command on `host`, as its own process. */
  spawn(host: string, cmd: string, args: string[], o?: SpawnOptions): ChildProcess
  /** A command on `host`, awaited (stdout and stderr returned). */
  exec(host: string, cmd: string, args: string[], env?: NodeJS.ProcessEnv): Promise<{ stdout: string; stderr: string }>
  /** Drops every packet between `a` and `b` in the router, both ways; `heal` lets them through again. */
  cut(a: string, b: string): Promise<void>
  heal(a: string, b: string): Promise<void>
  /** Removes every namespace (their links and routes go with them) and the processes left in them. */
  close(): Promise<void>
}

/** False with a reason when this machine cannot make network namespaces (not root, no iproute2). */
export async function canMakeHosts(): Promise<true | string> {
  if (process.getuid?.() !== 0) return 'the network drills need root (network namespaces)'
  try {
    await ip('netns', 'list')
    return true
  } catch (err) {
    return `ip netns is not usable here: ${(err as Error).message.split('\n')[0]}`
  }
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** Removes the namespaces (and the processes in them) of harnesses whose process is gone. */
async function removeLeftovers() {
  const { stdout } = await ip('netns', 'list')
  for (const line of stdout.split('\n')) {
    const name = line.split(' ')[0] ?? ''
    const owner = new RegExp(`^${PREFIX}-(\\d+)-`).exec(name)
    if (owner && !alive(Number(owner[1]))) await removeNamespace(name)
  }
  for (const dir of readdirSync('/tmp').filter((d) => d.startsWith(`${PREFIX}-`))) {
    const pid = Number(dir.split('-')[1])
    if (pid && !alive(pid)) rmSync(`/tmp/${dir}`, { recursive: true, force: true })
  }
}

async function removeNamespace(name: string) {
  const pids = (await ip('netns', 'pids', name).catch(() => ({ stdout: '' }))).stdout.split('\n').filter(Boolean)
  for (const pid of pids) {
    try {
      process.kill(Number(pid), 'SIGKILL') // what the harness started there (a PostgreSQL left by a killed run)
    } catch {
      /* gone */
    }
  }
  await ip('netns', 'del', name).catch(() => {})
}

/** A free 10.x.0.0/16 nobody routes here. */
async function freeNet(): Promise<number> {
  const { stdout } = await ip('-4', 'route', 'show', 'table', 'all')
  for (let i = 0; i < 50; i++) {
    const b = 100 + Math.floor(Math.random() * 100)
    if (!stdout.includes(`10.${b}.`)) return b
  }
  throw new Error('no free 10.x.0.0/16 for the drill hosts')
}

/**
 * Makes `names` hosts (each on its own /24 behind the router) and the client host (this
 * namespace). A scratch directory, `dir`, goes with them.
 */
export async function makeHosts(names: string[]): Promise<Hosts & { dir: string }> {
  await removeLeftovers()
  const id = `${process.pid}-${Math.random().toString(36).slice(2, 6)}`
  const tag = id.slice(-4) // interface names stop at 15 characters
  const net = await freeNet()
  const ns = (h: string) => `${PREFIX}-${id}-${h}`
  const router = ns('router')
  const made: string[] = []
  const addr = new Map<string, string>([['client', `10.${net}.0.2`]])
  const rules = new Set<string>()
  const dir = `/tmp/${PREFIX}-${id}`
  const close = async () => {
    for (const n of made.splice(0).reverse()) await removeNamespace(n)
    rmSync(dir, { recursive: true, force: true })
  }
  try {
    await ip('netns', 'add', router)
    made.push(router)
    await ip('-n', router, 'link', 'set', 'lo', 'up')
    await run('ip', ['netns', 'exec', router, 'sysctl', '-qw', 'net.ipv4.ip_forward=1'])
    // the client host: this namespace, on 10.N.0.0/24; its veth dies with the router's end
    await ip('link', 'add', `wd${tag}0c`, 'type', 'veth', 'peer', 'name', `wd${tag}0r`, 'netns', router)
    await ip('addr', 'add', `10.${net}.0.2/24`, 'dev', `wd${tag}0c`)
    await ip('link', 'set', `wd${tag}0c`, 'up')
    await ip('-n', router, 'addr', 'add', `10.${net}.0.1/24`, 'dev', `wd${tag}0r`)
    await ip('-n', router, 'link', 'set', `wd${tag}0r`, 'up')
    await ip('route', 'add', `10.${net}.0.0/16`, 'via', `10.${net}.0.1`)
    for (const [i, h] of names.entries()) {
      const n = ns(h)
      const sub = `10.${net}.${i + 1}`
      await ip('netns', 'add', n)
      made.push(n)
      await ip('-n', n, 'link', 'set', 'lo', 'up')
      await ip('link', 'add', `wd${tag}${i + 1}h`, 'netns', n, 'type', 'veth', 'peer', 'name', `wd${tag}${i + 1}r`, 'netns', router)
      await ip('-n', n, 'addr', 'add', `${sub}.2/24`, 'dev', `wd${tag}${i + 1}h`)
      await ip('-n', n, 'link', 'set', `wd${tag}${i + 1}h`, 'up')
      await ip('-n', router, 'addr', 'add', `${sub}.1/24`, 'dev', `wd${tag}${i + 1}r`)
      await ip('-n', router, 'link', 'set', `wd${tag}${i + 1}r`, 'up')
      await ip('-n', n, 'route', 'add', 'default', 'via', `${sub}.1`)
      addr.set(h, `${sub}.2`)
    }
  } catch (err) {
    await close()
    throw err
  }
  const ipOf = (h: string) =>
    addr.get(h) ??
    (() => {
      throw new Error(`no host ${h}`)
    })()
  const launcher = (h: string) => (h === 'client' ? [] : ['ip', 'netns', 'exec', ns(h)])
  const inHost = (h: string, cmd: string, args: string[]): [string, string[]] => {
    const [first, ...rest] = [...launcher(h), cmd, ...args]
    return [first!, rest]
  }
  const rule = async (op: 'add' | 'del', a: string, b: string) => {
    for (const [from, to] of [
      [a, b],
      [b, a],
    ] as const) {
      const key = `${from}>${to}`
      if ((op === 'add') === rules.has(key)) continue
      await ip('-n', router, 'rule', op, 'from', ipOf(from), 'to', ipOf(to), 'blackhole')
      op === 'add' ? rules.add(key) : rules.delete(key)
    }
  }
  return {
    dir,
    ip: ipOf,
    launcher,
    spawn: (h, cmd, args, o = {}) => spawn(...inHost(h, cmd, args), o),
    exec: (h, cmd, args, env) => run(...inHost(h, cmd, args), { env: env ?? process.env }),
    cut: (a, b) => rule('add', a, b),
    heal: (a, b) => rule('del', a, b),
    close,
  }
}
