/** Waiting without spinning: abortable sleeps and exponential backoff with jitter. */

export interface BackoffOptions {
  /** First delay, ms (default 250). */
  baseMs?: number
  /** Longest delay, ms (default 30 000). */
  maxMs?: number
}

/**
 * Delay before retry number `attempt` (0-based): exponential, capped, with "equal jitter" — at
 * least half the exponential step, so a retry is never immediate and a crowd of followers spreads out.
 */
export function backoffDelay(attempt: number, o: BackoffOptions = {}, random = Math.random): number {
  const base = o.baseMs ?? 250
  const max = o.maxMs ?? 30_000
  const step = Math.min(max, base * 2 ** Math.min(attempt, 30))
  return Math.round(step / 2 + random() * (step / 2))
}

/** Resolves after `ms`, or at once (false) when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve(false)
    const done = (ok: boolean) => {
      clearTimeout(timer)
      signal?.removeEventListener('abort', onAbort)
      resolve(ok)
    }
    const onAbort = () => done(false)
    const timer: ReturnType<typeof setTimeout> = setTimeout(() => done(true), Math.max(0, ms))
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}

/**
 * An AbortSignal that fires when `parent` does or after `timeoutMs`, and a `dispose` that drops the
 * timer and the listener (AbortSignal.any is not in every runtime the client supports).
 */
export function deadline(parent: AbortSignal | undefined, timeoutMs: number): { signal: AbortSignal; dispose(): void } {
  const ctl = new AbortController()
  const onAbort = () => ctl.abort(parent?.reason)
  if (parent?.aborted) ctl.abort(parent.reason)
  else parent?.addEventListener('abort', onAbort, { once: true })
  const timer: ReturnType<typeof setTimeout> = setTimeout(() => ctl.abort(new Error(`no answer in ${timeoutMs} ms`)), timeoutMs)
  return {
    signal: ctl.signal,
    dispose: () => {
      clearTimeout(timer)
      parent?.removeEventListener('abort', onAbort)
    },
  }
}
