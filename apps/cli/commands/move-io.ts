import { once } from 'node:events'
import { createReadStream, createWriteStream } from 'node:fs'
import { rename, rm } from 'node:fs/promises'
import { createInterface } from 'node:readline'
import type { Readable, Writable } from 'node:stream'
import { BackupError, DatabaseUnavailable, isConnectionError } from '../../../libs/shared/db/index.js'
import { UsageError } from '../io.js'

// The files and streams behind `wire backup`, `wire restore` and `wire move`, and their errors as one line each.

/** Writes a line and waits while the stream's buffer is full, so a slow disk or pipe bounds memory. */
export const lineSink =
  (stream: Writable | NodeJS.WritableStream) =>
  async (line: string): Promise<void> => {
    if (!stream.write(`${line}\n`)) await once(stream as Writable, 'drain')
  }

/** A file's lines (or a stream's), read as they are consumed. */
export const linesOf = (from: string | Readable | NodeJS.ReadableStream): AsyncIterable<string> =>
  createInterface({ input: typeof from === 'string' ? createReadStream(from) : from, crlfDelay: Infinity })

/**
 * A backup file written under a temporary name beside it (readable by its owner only: it holds the
 * fingerprint key) and renamed over `path` once complete, so a failed backup never replaces a good one.
 */
export async function openFileSink(path: string) {
  const temp = `${path}.partial-${process.pid}`
  const stream = createWriteStream(temp, { flags: 'wx', mode: 0o600 })
  await once(stream, 'open')
  let done = false
  return {
    write: lineSink(stream),
    async commit() {
      stream.end()
      await once(stream, 'finish')
      await rename(temp, path)
      done = true
    },
    async abandon() {
      if (done) return
      stream.destroy()
      await rm(temp, { force: true })
    },
  }
}

/** The errors an operator can act on, as one line (main prints a UsageError's message, never a stack). Others pass through. */
export function friendlyError(err: unknown): unknown {
  if (err instanceof UsageError) return err
  if (err instanceof BackupError) return new UsageError(err.message)
  const e = err as { code?: unknown; message?: unknown; severity?: unknown; cause?: unknown } | null
  if (e?.code === 'EWIRE_DATA_DIR_BUSY') return new UsageError(String(e.message))
  if (err instanceof DatabaseUnavailable || isConnectionError(err)) {
    const cause = err instanceof DatabaseUnavailable ? (err.cause as Error | undefined)?.message : String(e?.message)
    return new UsageError(`cannot reach the database: ${cause ?? 'connection failed'}`)
  }
  // PostgreSQL's own refusal (a SQLSTATE), or a file the system refused (ENOENT, EACCES, EEXIST …)
  if (typeof e?.code === 'string' && (typeof e.severity === 'string' || /^E[A-Z]+$/.test(e.code))) return new UsageError(String(e.message))
  return err
}
