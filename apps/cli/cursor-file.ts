import { closeSync, existsSync, fsyncSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs'
import { UsageError } from './io.js'

/** The cursor kept in `path` (a non-negative integer), or undefined when there is no file yet. */
export function readCursorFile(path: string): number | undefined {
  if (!existsSync(path)) return undefined
  const text = readFileSync(path, 'utf8').trim()
  if (!/^\d{1,16}$/.test(text)) throw new UsageError(`${path} does not hold a cursor (a non-negative integer)`)
  return Number(text)
}

/** Replaces the file in one step (write, fsync, rename), so a crash leaves the old cursor or the new one. */
export function writeCursorFile(path: string, cursor: number): void {
  const tmp = `${path}.tmp`
  const fd = openSync(tmp, 'w')
  try {
    writeSync(fd, `${cursor}\n`)
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
  renameSync(tmp, path)
}
