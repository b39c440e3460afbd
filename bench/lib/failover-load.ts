// The load of a failover drill: publishers that record what the writer answered, and followers of
// every kind that keep only `nextCursor` (docs/operations.md "Failover").

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

export interface PublishRecord {
  /** ms since the drill started, when the request was sent and when it was answered */
  sent: number
  answered: number
  status: number | 'timeout' | 'network'
  id?: string
  /** The acknowledged signal's seq (its `cursor`). */
  cursor?: number
  outcome?: string
  retryAfter?: string | null
}

/**
 * `count` publishers, each `perSecond` publishes a second, until `stop()`; every answer recorded
 * (into `records`, as it comes). `signalOf`: publisher `p`'s `i`th signal (default a broadcast).
 */
export async function publishers(
  writerUrl: string,
  count: number,
  perSecond: number,
  t0: number,
  stop: () => boolean,
  records: PublishRecord[] = [],
  signalOf: (p: number, i: number) => object = (p, i) => ({ $type: 'broadcast', p, i }),
): Promise<PublishRecord[]> {
  const gap = 1000 / perSecond
  await Promise.all(
    Array.from({ length: count }, async (_, p) => {
      for (let i = 0; !stop(); i++) {
        const sent = Date.now() - t0
        const r: PublishRecord = { sent, answered: 0, status: 'network' }
        try {
          const res = await fetch(`${writerUrl}/sw/signals`, {
            method: 'POST',
            headers: { authorization: `Bearer drill-publisher-${p}`, 'content-type': 'application/json' },
            body: JSON.stringify(signalOf(p, i)),
            signal: AbortSignal.timeout(35_000),
          })
          const body = (await res.json()) as {
            signal?: { id: string }
            cursor?: number
            error?: { details?: { outcome?: string }; outcome?: string }
          }
          r.status = res.status
          r.id = body.signal?.id
          r.cursor = body.cursor
          r.outcome = body.error?.details?.outcome ?? body.error?.outcome
          r.retryAfter = res.headers.get('retry-after')
        } catch (err) {
          r.status = (err as Error).name === 'TimeoutError' ? 'timeout' : 'network'
        }
        r.answered = Date.now() - t0
        records.push(r)
        await sleep(Math.max(0, gap - (r.answered - sent)))
      }
    }),
  )
  return records
}

export interface FollowerSpec {
  name: string
  /** The reader to ask on poll `i`. */
  reader: (i: number) => string
  limit: number
  wait: number
  /** Pause between polls that returned nothing (tight polling without a wait). */
  pauseMs?: number
  /** Drop the poll in flight and start over from the saved cursor this often (a restarting client). */
  restartEveryMs?: number
  /** The path under the reader: /sw/signals or the plain v1 /sw/v1/signals. */
  path?: string
  /** Told the follower's cursor after each page, its starting cursor first. */
  onCursor?: (cursor: number) => void
  /** Told the id of each signal received. */
  onSeen?: (id: string) => void
}

export interface FollowerResult {
  name: string
  seen: string[]
  cursor: number
  wentBack: number
  errors: number
  /** What the failed polls answered (status, or the error's name). */
  errorKinds: Record<string, number>
  restarts: number
  /** Every page: [cursor asked, nextCursor answered, signals, poll number, ms], to explain a gap. */
  pages: Array<[number, number, number, number, number]>
}

/** Follows from the head at start until `done(cursor)` says it has caught up, or `stop` aborts (the poll in flight with it). */
export async function follow(spec: FollowerSpec, done: (cursor: number) => boolean, stop?: AbortSignal): Promise<FollowerResult> {
  const path = spec.path ?? '/sw/signals'
  const out: FollowerResult = { name: spec.name, seen: [], cursor: 0, wentBack: 0, errors: 0, errorKinds: {}, restarts: 0, pages: [] }
  const failed = (kind: string) => (out.errors++, (out.errorKinds[kind] = (out.errorKinds[kind] ?? 0) + 1), sleep(100))
  let cursor: number | null = null
  let restartAt = spec.restartEveryMs ? Date.now() + spec.restartEveryMs : Infinity
  for (let i = 0; (cursor === null || !done(cursor)) && !stop?.aborted; i++) {
    const ctl = new AbortController()
    const stopped = () => ctl.abort('stop')
    stop?.addEventListener('abort', stopped)
    const deadline = setTimeout(() => ctl.abort(), (spec.wait + 10) * 1000)
    const restart = restartAt < Infinity ? setTimeout(() => ctl.abort('restart'), Math.max(0, restartAt - Date.now())) : undefined
    try {
      const q = cursor === null ? `limit=1` : `cursor=${cursor}&limit=${spec.limit}&wait=${spec.wait}`
      const res = await fetch(`${spec.reader(i)}${path}?${q}`, { signal: ctl.signal })
      const page = (await res.json()) as { signals?: Array<{ id: string }>; nextCursor?: number }
      if (res.status !== 200 || typeof page.nextCursor !== 'number') {
        await failed(`${res.status} ${JSON.stringify(page).slice(0, 120)}`)
        continue
      }
      if (cursor !== null) {
        out.pages.push([cursor, page.nextCursor, page.signals?.length ?? 0, i, Date.now()])
        for (const s of page.signals ?? []) {
          out.seen.push(s.id)
          spec.onSeen?.(s.id)
        }
        if (page.nextCursor < cursor) out.wentBack++
      }
      cursor = page.nextCursor
      out.cursor = cursor
      spec.onCursor?.(cursor)
      if (!page.signals?.length && spec.pauseMs) await sleep(spec.pauseMs)
    } catch (err) {
      if (ctl.signal.reason === 'stop') break
      if (ctl.signal.reason === 'restart') {
        out.restarts++
        restartAt = Date.now() + spec.restartEveryMs!
      } else await failed((err as Error).name)
    } finally {
      clearTimeout(deadline)
      clearTimeout(restart)
      stop?.removeEventListener('abort', stopped)
    }
  }
  return out
}

/** Followers of every kind on two readers. */
export function followerKinds(readers: [string, string]): FollowerSpec[] {
  const [a, b] = readers
  return [
    { name: 'long-poll, reader 1', reader: () => a, limit: 100, wait: 5 },
    { name: 'long-poll, reader 2', reader: () => b, limit: 100, wait: 5 },
    { name: 'plain v1 client (nextCursor only)', reader: () => a, limit: 50, wait: 5, path: '/sw/v1/signals' },
    { name: 'tight polling, reader 2', reader: () => b, limit: 100, wait: 0, pauseMs: 20 },
    { name: 'small pages, readers alternating', reader: (i) => (i % 2 ? a : b), limit: 3, wait: 1 },
    { name: 'restarting every 1.5 s', reader: (i) => (i % 2 ? b : a), limit: 20, wait: 5, restartEveryMs: 1500 },
  ]
}
