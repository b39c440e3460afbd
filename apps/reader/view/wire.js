// The page's one door to the board. Everything else imports from here, never fetches itself.
// INTERIM: a minimal module shaped like the client library, until the page imports the library.

export class WireError extends Error {
  name = 'WireError'
  constructor(code, message, status, retryAfter) {
    super(message || code)
    this.code = code
    this.status = status
    this.retryAfter = retryAfter
  }
}

const sleep = (ms, signal) =>
  new Promise((resolve, reject) => {
    const t = setTimeout(resolve, ms)
    signal?.addEventListener('abort', () => (clearTimeout(t), reject(signal.reason)), { once: true })
  })

function qs(query) {
  const p = new URLSearchParams()
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== null && v !== '') p.set(k, String(v))
  const s = p.toString()
  return s ? `?${s}` : ''
}

async function call(path, { method = 'GET', token, body, signal } = {}) {
  const headers = { accept: 'application/json' }
  if (token) headers.authorization = `Bearer ${token}`
  if (body !== undefined) headers['content-type'] = 'application/json'
  const res = await fetch(path, { method, headers, signal, body: body === undefined ? undefined : JSON.stringify(body) })
  const data = await res.json().catch(() => null)
  if (!res.ok) {
    const retry = Number(res.headers.get('retry-after'))
    throw new WireError(data?.error?.code ?? 'internal', data?.error?.message ?? res.statusText, res.status, retry > 0 ? retry : undefined)
  }
  return data
}

const live = (s, now) => s.pinned || Date.parse(s.expiresAt) > now

/** The board as the page sees it: reads, a follower and, given the admin token, the admin calls. */
export function openBoard() {
  const enc = encodeURIComponent
  return {
    read: (query) => call(`/sw/signals${qs(query)}`),
    get: (id) => call(`/sw/signals/${enc(id)}`),
    thread: (id) => call(`/sw/signals/${enc(id)}/thread`).then((r) => r.signals),
    board: () => call('/sw/wire'),
    discover: () => call('/.well-known/wire'),
    stats: (query) => call(`/sw/stats${qs(query)}`),
    tags: (prefix, limit = 20) => call(`/sw/tags${qs({ q: prefix, limit })}`).then((r) => r.tags),

    /** Each new matching signal once, from `cursor` on: long-polls, dedupe, expiry, Retry-After, backoff. */
    async *follow(query, { cursor, signal } = {}) {
      const seen = new Set()
      let failures = 0
      while (!signal?.aborted) {
        let page
        try {
          page = await call(`/sw/signals${qs({ ...query, cursor, wait: cursor === undefined ? undefined : 25 })}`, { signal })
          failures = 0
        } catch (err) {
          if (signal?.aborted) return
          const transient = !(err instanceof WireError) || err.status === 429 || err.status >= 500
          if (!transient) throw err
          failures++
          const backoff = Math.min(30_000, 500 * 2 ** failures) * (0.5 + Math.random() / 2)
          await sleep(err.retryAfter ? err.retryAfter * 1000 : backoff, signal).catch(() => {})
          continue
        }
        cursor = page.nextCursor
        const now = Date.now()
        for (const s of page.signals) {
          if (seen.has(s.id) || !live(s, now)) continue
          seen.add(s.id)
          if (seen.size > 5000) seen.delete(seen.values().next().value)
          yield s
        }
      }
    },

    /** The admin API with this token (never stored here). */
    admin(token) {
      const a = (method, path, body) => call(`/sw/admin${path}`, { method, token, body })
      return {
        board: () => a('GET', '/wire'),
        patchBoard: (patch) => a('PATCH', '/wire', patch),
        rules: () => a('GET', '/rules').then((r) => r.rules),
        addRule: (ruleType, identityId) => a('POST', '/rules', { ruleType, identityId }).then((r) => r.rule),
        removeRule: (id) => a('DELETE', `/rules/${enc(id)}`),
        pin: (id) => a('POST', `/signals/${enc(id)}/pin`).then((r) => r.signal),
        unpin: (id) => a('DELETE', `/signals/${enc(id)}/pin`).then((r) => r.signal),
        remove: (id) => a('DELETE', `/signals/${enc(id)}`),
      }
    },
  }
}
