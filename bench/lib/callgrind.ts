import { execFile } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { freePort, startRole, type RoleProc } from './procs.js'

const run = promisify(execFile)

/**
 * valgrind's options for node. `--smc-check=all-non-file`: V8 writes the machine code it runs into
 * anonymous memory and rewrites it (JIT, patching), which valgrind's default (code on the stack
 * only) would not see. `--trace-children=yes`: a role that runs itself again (`runAgainWith`,
 * libs/shared/runtime/run-again.ts) stays under callgrind, with the same pid. `--instr-atstart=no`:
 * nothing is counted until the role answers /readyz (a start runs several times faster
 * uninstrumented); from then on every thread's instructions are counted, summed. A phase is the
 * counts between `zero()` and `dump()`.
 */
const VALGRIND = ['valgrind', '--tool=callgrind', '--smc-check=all-non-file', '--trace-children=yes', '--instr-atstart=no', '-q']

export interface CallgrindProc extends RoleProc {
  /**
   * A full garbage collection (V8's inspector, HeapProfiler.collectGarbage), before a phase: every phase
   * starts from the same old generation, so whether a major collection falls inside a short phase
   * depends on what the phase allocates, not on what came before it.
   */
  collect(): Promise<void>
  /** Sets every counter to 0 (the start of a phase). */
  zero(): Promise<void>
  /** Writes the counts since the last zero() and returns their instructions (Ir) and the file. */
  dump(label: string): Promise<{ instructions: number; file: string }>
}

/**
 * A role of the built code (`root`: another checkout's) under valgrind's callgrind: instructions
 * executed, the same count whatever else the machine runs. `nodeArgs`: e.g. --perf-basic-prof, to
 * name the JIT's functions in the dumps (bench/instructions.ts, BENCH_CALLGRIND_KEEP).
 */
export async function startUnderCallgrind(
  role: 'writer' | 'server' | 'reader',
  port: number,
  env: Record<string, string>,
  root?: string,
  nodeArgs: string[] = [],
): Promise<CallgrindProc> {
  const dir = mkdtempSync(join(tmpdir(), 'wire-callgrind-'))
  const inspectPort = await freePort()
  nodeArgs = [...nodeArgs, `--inspect=127.0.0.1:${inspectPort}`]
  // a start under callgrind runs ~5x slower: on a busy machine a first connection to PostgreSQL may outlast
  // the pool's 3 s connect timeout and the role exits; it is started again (nothing was counted yet)
  let proc: RoleProc | undefined
  for (let tries = 1; !proc; tries++)
    try {
      proc = await startRole(role, port, env, root, nodeArgs, {
        launcher: [...VALGRIND, `--callgrind-out-file=${dir}/cg.%p`],
        readyWithinS: 900,
      })
    } catch (err) {
      if (tries === 3) throw err
      process.stderr.write(`${role} under callgrind did not start (${(err as Error).message.slice(0, 300)}); again\n`)
    }
  const pid = String(proc.child.pid)
  const control = (...args: string[]) => run('callgrind_control', [...args, pid], { timeout: 120_000 })
  /** The dump files' part numbers: callgrind writes cg.<pid>.<part> at each dump. */
  await control('-i', 'on')
  const parts = () =>
    readdirSync(dir)
      .map((f) => /^cg\.\d+\.(\d+)$/.exec(f))
      .filter((m) => m !== null)
      .map((m) => Number(m[1]))
  return {
    ...proc,
    async collect() {
      const [target] = (await (await fetch(`http://127.0.0.1:${inspectPort}/json/list`)).json()) as Array<{ webSocketDebuggerUrl: string }>
      const ws = new WebSocket(target!.webSocketDebuggerUrl)
      await new Promise<void>((resolve, reject) => {
        ws.onopen = () => ws.send(JSON.stringify({ id: 1, method: 'HeapProfiler.collectGarbage' }))
        ws.onmessage = (m) => (JSON.parse(String(m.data)) as { id?: number }).id === 1 && resolve()
        ws.onerror = () => reject(new Error('inspector: no answer to collectGarbage'))
      })
      ws.close()
    },
    zero: async () => void (await control('-z')),
    async dump(label: string) {
      const before = new Set(parts())
      await control('-d', label)
      const part = parts()
        .filter((p) => !before.has(p))
        .sort((a, b) => b - a)[0]
      if (part === undefined) throw new Error(`callgrind wrote no dump for ${label}`)
      const file = join(dir, `cg.${pid}.${part}`)
      const totals = /^(?:totals|summary): (\d+)/m.exec(readFileSync(file, 'utf8'))
      if (!totals) throw new Error(`no totals in ${file}`)
      return { instructions: Number(totals[1]), file }
    },
    async stop() {
      await proc.stop()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
