import { ConfigError } from '../../libs/shared/config/index.js'
import { WireError } from '../../client/src/index.js'
import { CliConfigError, loadCliConfig, type CliConfig } from './config.js'
import { UsageError, type Io } from './io.js'
import { buildProgram } from './program.js'
import { exitIfNodeTooOld } from '../../libs/shared/runtime/index.js'

// The `wire` command line. The only file of the CLI that touches process: environment, streams, signals, exit code.

exitIfNodeTooOld('wire')

let cfg: CliConfig | undefined
const ctl = new AbortController()
let interrupts = 0
for (const sig of ['SIGINT', 'SIGTERM'] as const)
  process.on(sig, () => {
    if (++interrupts > 1) process.exit(130) // a second Ctrl-C does not wait
    ctl.abort(new Error(`${sig}`))
  })
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0) // `wire follow | head` closed the pipe
  throw err
})

const io: Io = {
  get cfg() {
    return (cfg ??= loadCliConfig(process.env))
  },
  env: process.env,
  out: (line) => void process.stdout.write(`${line}\n`),
  err: (line) => void process.stderr.write(`${line}\n`),
  tty: process.stdout.isTTY === true,
  stdinTty: process.stdin.isTTY === true,
  signal: ctl.signal,
  streams: { in: process.stdin, out: process.stdout },
  readStdin: async () => {
    const chunks: Buffer[] = []
    for await (const c of process.stdin) chunks.push(c as Buffer)
    return Buffer.concat(chunks).toString('utf8')
  },
}

/** An error's message followed by its causes' (`the database is unavailable (connect ECONNREFUSED …)`). */
function failureText(err: unknown): string {
  const parts: string[] = []
  for (let e: unknown = err; e !== undefined && e !== null && parts.length < 4; e = (e as { cause?: unknown }).cause) {
    const text = e instanceof Error ? e.message || e.name : String(e)
    if (text && !parts.includes(text)) parts.push(text)
    if (!(e instanceof Error)) break
  }
  return parts.length > 1 ? `${parts[0]} (${parts.slice(1).join(': ')})` : (parts[0] ?? 'failed')
}

try {
  await buildProgram(io).parseAsync(process.argv)
} catch (err) {
  if (ctl.signal.aborted) process.exitCode = 130
  else {
    process.exitCode = 1
    if (err instanceof WireError) io.err(`wire: ${err.code}${err.status ? ` (${err.status})` : ''}: ${err.message}`)
    else if (err instanceof ConfigError || err instanceof CliConfigError || err instanceof UsageError) io.err(`wire: ${err.message}`)
    else io.err(`wire: ${failureText(err)}`) // a message and its causes; never a stack trace
  }
}
