import type { CliConfig } from './config.js'

/** Everything a command touches outside itself, handed down from main. */
export interface Io {
  cfg: CliConfig
  /** The whole environment, for the commands that load the server's configuration (migrate, check-config). */
  env: Record<string, string | undefined>
  out(line: string): void
  err(line: string): void
  /** Standard output is a terminal: colour and relative times. */
  tty: boolean
  readStdin(): Promise<string>
  /** Standard input is a terminal (nothing piped in). */
  stdinTty: boolean
  /** Standard input and output as streams, for the commands that carry a whole board (backup, restore). */
  streams: { in: NodeJS.ReadableStream; out: NodeJS.WritableStream }
  /** Aborted on SIGINT or SIGTERM. */
  signal: AbortSignal
}

/** A command failed in a way the user can fix; main prints the message and exits 1. */
export class UsageError extends Error {
  override name = 'UsageError'
}
