import type { Command } from 'commander'
import type { FollowQuery } from '../../../client/src/index.js'
import { clientOf } from '../client-of.js'
import { readCursorFile, writeCursorFile } from '../cursor-file.js'
import { signalLine } from '../format.js'
import { followExec } from './follow-exec.js'
import { UsageError, type Io } from '../io.js'

interface FollowOptions {
  type?: string
  tag?: string[]
  origin?: string
  q?: string
  since?: string
  ref?: string
  includeExpired?: boolean
  cursor?: string
  cursorFile?: string
  json?: boolean
  exec?: string
}

const collectValues = (v: string, prev: string[] = []) => [...prev, v]

export function followCommand(io: Io): (program: Command) => void {
  return (program) =>
    program
      .command('follow')
      .description('follow the board live: one line per signal, each once, until Ctrl-C')
      .option('-t, --type <type>', 'only this $type')
      .option('--tag <tag>', 'only signals with this tag (repeat: any of them)', collectValues)
      .option('--origin <identity>', 'only from this identity id')
      .option('-q, --q <text>', 'only signals containing this text')
      .option('--since <when>', 'only signals after this (ISO time, Unix seconds, or 15m, 2h, 1d)')
      .option('--ref <id>', 'only direct replies to this signal (id or sw:// URI)')
      .option('--include-expired', 'also expired signals not yet swept')
      .option('--cursor <n>', 'start after this feed position (default: the newest page first)')
      .option('--cursor-file <path>', 'resume from the cursor in this file, and keep it there after every page')
      .option('--json', 'one JSON signal per line (NDJSON)')
      .option(
        '--exec <command>',
        'run this shell command once per signal, its JSON on standard input; the cursor moves on only when it exits 0 (start: the head, unless --cursor or --cursor-file)',
      )
      .addHelpText(
        'after',
        `\nExamples:\n  wire follow --tag gpu\n  wire follow --json --cursor-file .wire-cursor | my-agent\n  wire follow --type request --cursor-file .wire-cursor --exec './handle-request.sh'`,
      )
      .action(async (o: FollowOptions, cmd: Command) => {
        if (o.cursor !== undefined && !/^\d{1,16}$/.test(o.cursor)) throw new UsageError('--cursor wants a non-negative integer')
        const cursor = o.cursor !== undefined ? Number(o.cursor) : o.cursorFile ? readCursorFile(o.cursorFile) : undefined
        const query: FollowQuery = {
          ...(o.type && { type: o.type }),
          ...(o.tag?.length && { tag: o.tag }),
          ...(o.origin && { origin: o.origin }),
          ...(o.q && { q: o.q }),
          ...(o.since && { since: o.since }),
          ...(o.ref && { ref: o.ref }),
          ...(o.includeExpired && { includeExpired: true }),
        }
        const wire = clientOf(io, cmd)
        if (o.exec !== undefined) {
          if (!o.exec.trim()) throw new UsageError('--exec wants a command')
          return followExec(io, wire, query, { command: o.exec, cursor, cursorFile: o.cursorFile })
        }
        let announced = false
        const follower = wire.follow(query, {
          ...(cursor !== undefined && { cursor }),
          signal: io.signal,
          onCursor: (c) => {
            if (o.cursorFile) writeCursorFile(o.cursorFile, c)
            // where it started, once the first page is in: a resumed follower names the cursor it resumed from
            const from = cursor !== undefined ? `after cursor ${cursor}` : `from the newest page (now at cursor ${c})`
            if (!announced) io.err(`wire: following ${follower.url} ${from}`), (announced = true)
          },
          onRetry: ({ error, delayMs, url }) =>
            io.err(`wire: ${url}: ${error.code}: ${error.message}; trying again in ${(delayMs / 1000).toFixed(1)} s`),
        })
        const style = { colour: io.tty && !io.cfg.noColor, relative: io.tty }
        for await (const s of follower) io.out(o.json ? JSON.stringify(s) : signalLine(s, style))
      })
}
