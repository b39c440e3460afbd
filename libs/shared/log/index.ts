import { pino, type Logger } from 'pino'

export type { Logger }
export type Role = 'writer' | 'reader' | 'agents' | 'sweeper' | 'server' | 'aggregator' | 'identity'

/** Paths pino censors wherever they appear. Tokens and signal payloads are never logged on purpose; this is the net. */
const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  '*.token',
  '*.secret',
  '*.adminToken',
  '*.fingerprintSecret',
  '*.payload',
  '*.body',
]

export function createLogger(role: Role, level: string, destination?: NodeJS.WritableStream): Logger {
  const opts = { level, base: { app: role }, redact: { paths: REDACT_PATHS, censor: '[redacted]' } }
  return destination ? pino(opts, destination as pino.DestinationStream) : pino(opts)
}
