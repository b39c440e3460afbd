import { spawn } from 'node:child_process'
import { backoffDelay, sleep, type FollowQuery, type WireClient } from '../../../client/src/index.js'
import { writeCursorFile } from '../cursor-file.js'
import type { Io } from '../io.js'

export interface ExecOptions {
  command: string
  cursor: number | undefined
  cursorFile: string | undefined
}

/**
 * `wire follow --exec CMD`: runs CMD (with `sh -c`) once per signal, the signal's JSON on its
 * standard input, one at a time. The cursor moves past a signal (and into --cursor-file) only once
 * its command exited 0: a command that fails is run again on the same signal after a backoff, and a
 * follower killed mid-command offers that signal again when it resumes from the file, so nothing
 * is lost and at most that one signal is run twice. Pages are read one signal at a time, so every
 * cursor kept is the position of a signal whose command succeeded. Without a cursor it starts at
 * the head: the signals published from then on.
 */
export async function followExec(io: Io, wire: WireClient, query: FollowQuery, o: ExecOptions): Promise<void> {
  let kept = o.cursor
  let failures = 0
  let announced = false
  while (!io.signal.aborted) {
    let failed = false
    const follower = wire.follow(
      { ...query, limit: 1 },
      {
        ...(kept !== undefined ? { cursor: kept } : { from: 'head' as const }),
        signal: io.signal,
        // called for a page once its signal was handed over and the loop below asked for the next: its command succeeded
        onCursor: (c) => {
          kept = c
          if (o.cursorFile) writeCursorFile(o.cursorFile, c)
          if (!announced) io.err(`wire: following ${follower.url} after cursor ${c}, running: ${o.command}`), (announced = true)
        },
        onRetry: ({ error, delayMs, url }) =>
          io.err(`wire: ${url}: ${error.code}: ${error.message}; trying again in ${(delayMs / 1000).toFixed(1)} s`),
      },
    )
    for await (const s of follower) {
      const code = await run(o.command, `${JSON.stringify(s)}\n`)
      if (code === 0) {
        failures = 0
        continue
      }
      const delayMs = backoffDelay(failures++, { baseMs: 1000, maxMs: 60_000 })
      io.err(
        `wire: ${o.command}: exited ${code} on signal ${s.id}; the cursor stays at ${kept ?? 'the head'}, running it again in ${(delayMs / 1000).toFixed(1)} s`,
      )
      failed = true
      if (!(await sleep(delayMs, io.signal))) return
      break // a new follower from the kept cursor offers the same signal again
    }
    if (!failed) return // the follower ended: aborted
  }
}

/** Runs `command` with `input` on its standard input; its output is ours. Resolves with its exit code (a signal's death is 128 + n, as sh says). */
function run(command: string, input: string): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn('sh', ['-c', command], { stdio: ['pipe', 'inherit', 'inherit'] })
    child.on('error', () => resolve(127))
    child.on('close', (code, sig) => resolve(code ?? (sig ? 128 : 1)))
    child.stdin.on('error', () => {}) // a command that does not read its input closes the pipe early: fine
    child.stdin.end(input)
  })
}
