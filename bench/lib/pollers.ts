import { fork, type ChildProcess } from 'node:child_process'
import { projectPath } from '../../libs/shared/paths.js'

/** Sockets per client process: well under this sandbox's cap of 20,000 open files per process. */
const PER_PROCESS = 5000

export interface PollReport {
  /** Arrival times (epoch ms) of answers carrying signals since the last report. */
  arrivals: number[]
  /** Answers of any kind since the start, and those that were not 2xx. */
  answered: number
  errors: number
  /** Those errors by status (0: a connection closed or failed, and was reopened). */
  refusals: Record<string, number>
  /** The refusals' error messages: "<status> <message>" → count. */
  reasons: Record<string, number>
  /** CPU time the client processes spent since the start (user + system), ms. */
  cpuMs: number
}

const sumCounts = (counts: Array<Record<string, number> | undefined>) =>
  counts.reduce<Record<string, number>>((s, c) => {
    for (const [k, v] of Object.entries(c ?? {})) s[k] = (s[k] ?? 0) + v
    return s
  }, {})

/**
 * The fan-out client: `count` followers of `url` (a reader's base URL), each a long-poll on its own
 * keep-alive socket that polls again from `nextCursor` as soon as it is answered. Spread over child
 * processes of PER_PROCESS sockets (bench/lib/poll-proc.ts), each single-threaded, with pre-built
 * requests and no JSON parsing, so the client costs far less per response than the server.
 */
export async function holdPollers(
  url: string,
  count: number,
  cursor: number,
  opts: { wait?: number; path?: string; forwardedFrom?: number; track?: string; trackCount?: number } = {},
) {
  const { wait = 25, path = '/sw/signals?cursor=', forwardedFrom, track, trackCount } = opts
  const u = new URL(url)
  const procs: ChildProcess[] = []
  const opened: Array<Promise<void>> = []
  for (let left = count; left > 0; left -= PER_PROCESS) {
    const from = forwardedFrom === undefined ? {} : { forwardedFrom: forwardedFrom + count - left }
    const data = {
      host: u.hostname,
      port: Number(u.port),
      path,
      cursor,
      wait,
      count: Math.min(PER_PROCESS, left),
      ...from,
      ...(track && { track, trackCount }),
    }
    const child = fork(projectPath('dist/bench/lib/poll-proc.js'), [JSON.stringify(data)], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    })
    procs.push(child)
    opened.push(
      new Promise(
        (resolve, reject) => (
          child.once('message', () => resolve()), child.once('exit', (c) => reject(new Error(`poller process exited with ${c}`)))
        ),
      ),
    )
  }
  await Promise.all(opened)
  const ask = (p: ChildProcess) =>
    new Promise<{
      arrivals: number[]
      answered: number
      errors: number
      refusals: Record<string, number>
      reasons: Record<string, number>
      cpu: { user: number; system: number }
    }>((resolve) => {
      p.once('message', (m) => resolve(m as never))
      p.send({ cmd: 'report' })
    })
  return {
    processes: procs.length,
    async report(): Promise<PollReport> {
      const all = await Promise.all(procs.map(ask))
      return {
        arrivals: all.flatMap((r) => r.arrivals),
        answered: all.reduce((s, r) => s + r.answered, 0),
        errors: all.reduce((s, r) => s + r.errors, 0),
        refusals: sumCounts(all.map((r) => r.refusals)),
        reasons: sumCounts(all.map((r) => r.reasons)),
        cpuMs: all.reduce((s, r) => s + (r.cpu.user + r.cpu.system) / 1000, 0),
      }
    },
    /**
     * With `track`: first deliveries recorded so far. Cheap to ask while answers still arrive, unlike
     * `tracked()`, whose list of arrival times holds a client's event loop while it is sent.
     */
    async recorded(): Promise<number> {
      const all = await Promise.all(
        procs.map(
          (p) =>
            new Promise<{ recorded: number }>(
              (resolve) => (p.once('message', (m) => resolve(m as { recorded: number })), p.send({ cmd: 'recorded' })),
            ),
        ),
      )
      return all.reduce((s, a) => s + a.recorded, 0)
    },
    /** With `track`: first deliveries of each signal n since the last call, as n → arrival times (epoch ms); and the duplicates so far. */
    async tracked(): Promise<{ got: Map<number, number[]>; duplicates: number }> {
      type Tracked = { tracked: Array<[number, number[]]>; duplicates: number }
      const all = await Promise.all(
        procs.map((p) => new Promise<Tracked>((resolve) => (p.once('message', (m) => resolve(m as Tracked)), p.send({ cmd: 'tracked' })))),
      )
      const got = new Map<number, number[]>()
      for (const [n, times] of all.flatMap((a) => a.tracked)) got.set(n, (got.get(n) ?? []).concat(times))
      return { got, duplicates: all.reduce((s, a) => s + a.duplicates, 0) }
    },
    async stop() {
      await Promise.all(
        procs.map(
          (p) =>
            new Promise<void>((resolve) => (p.exitCode !== null ? resolve() : (p.once('exit', () => resolve()), p.send({ cmd: 'stop' })))),
        ),
      )
    },
  }
}
export type Pollers = Awaited<ReturnType<typeof holdPollers>>
