import type { Logger } from '../log/index.js'

/** What a process opened, closed in reverse order of opening: also after a partial start. */
export interface CloseStack {
  /** Adds what closes a part opened just now: closed before everything opened earlier. */
  defer(close: () => unknown): void
  /** Closes everything deferred, last first; a failure is logged and the rest still close. Idempotent. */
  close(): Promise<void>
}

export function closeStack(log: Logger): CloseStack {
  const opened: Array<() => unknown> = []
  return {
    defer: (c) => void opened.push(c),
    async close() {
      while (opened.length) {
        const c = opened.pop()!
        try {
          await c()
        } catch (err) {
          log.warn({ err }, 'error while closing')
        }
      }
    },
  }
}

/** What `build()` returns; when it fails, `close()` first (what was opened so far closes), then the failure is thrown. */
export async function closeOnFailure<T>(close: () => Promise<void>, build: () => Promise<T>): Promise<T> {
  try {
    return await build()
  } catch (err) {
    await close()
    throw err
  }
}
