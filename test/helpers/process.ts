import { spawn, type ChildProcess } from 'node:child_process'
import { createServer } from 'node:net'
import type { Test } from 'tap'

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer()
    srv.on('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number }
      srv.close(() => resolve(port))
    })
  })
}

export interface Proc {
  child: ChildProcess
  output: () => string
  /** Resolves once the process and everything holding its output (its children) are gone. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  /** Signals the whole process group, as Ctrl-C in a terminal does. */
  signal(sig: NodeJS.Signals): void
}

/**
 * Spawns a command in its own process group and waits until its output matches `ready`. The wait's
 * limit only finds a process that never gets ready: a first start of the embedded database took
 * over 90 s beside the suite's others on a loaded 2-core machine, so it is generous.
 */
export async function startProcess(
  t: Test,
  cmd: string,
  args: string[],
  env: Record<string, string | undefined>,
  ready: RegExp,
  timeoutMs = 240_000,
  cwd?: string,
): Promise<Proc> {
  const child = spawn(cmd, args, { env: env as NodeJS.ProcessEnv, cwd, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  child.stdout!.on('data', (d) => (out += d))
  child.stderr!.on('data', (d) => (out += d))
  // 'close' waits for the stdio pipes too, which the server process (npm's child) holds until it exits
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
    child.once('close', (code, signal) => r({ code, signal })),
  )
  const proc: Proc = {
    child,
    output: () => out,
    exited,
    signal: (sig) => {
      try {
        process.kill(-child.pid!, sig)
      } catch {
        /* already gone */
      }
    },
  }
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      proc.signal('SIGKILL')
      await exited
    }
  })
  const t0 = Date.now()
  while (!ready.test(out)) {
    if (child.exitCode !== null) throw new Error(`${cmd} ${args.join(' ')} exited early (${child.exitCode}):\n${out}`)
    if (Date.now() - t0 > timeoutMs) throw new Error(`${cmd} ${args.join(' ')} not ready in ${timeoutMs} ms:\n${out}`)
    await new Promise((r) => setTimeout(r, 100))
  }
  return proc
}
