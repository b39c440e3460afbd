/**
 * The aggregator's database failing at start as one line naming DATABASE_URL (where it points, never
 * its password), instead of a logged stack trace: PostgreSQL's own refusal (a FATAL with its SQLSTATE,
 * such as a URL naming no user) or no connection at all. Anything else is not ours to word: null.
 */
export function databaseStartHint(err: unknown, databaseUrl: string): string | null {
  const e = err as { severity?: unknown; code?: unknown; syscall?: unknown; message?: unknown } | null
  const fromServer = typeof e?.severity === 'string' && typeof e.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code)
  const noConnection = typeof e?.code === 'string' && ['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH'].includes(e.code) && (e.syscall === 'connect' || e.syscall === 'getaddrinfo')
  if (!fromServer && !noConnection) return null
  let where = 'the URL given'
  try {
    const u = new URL(databaseUrl)
    where = `${u.username ? `${decodeURIComponent(u.username)}@` : '(no user)@'}${u.host || '(local socket)'}${u.pathname}`
  } catch {
    /* not a URL: say so below */
  }
  const message = String(e?.message ?? '').split('\n')[0]!.slice(0, 300)
  return `the aggregator cannot use its database (DATABASE_URL: ${where}): ${message}. Set DATABASE_URL to postgres://user:password@host:5432/database`
}
