/**
 * One line for a start that failed because DATABASE_URL points at nothing usable: the host and the
 * database it names (never its password), what PostgreSQL said, and what to do. `wire migrate` and
 * every role's start print it instead of a stack trace. Null for any other error.
 */
export function databaseHint(err: unknown, url: string): string | null {
  const code = innermostCode(err)
  if (!code) return null
  let host = 'DATABASE_URL'
  let database = ''
  let user = ''
  try {
    const u = new URL(url)
    host = u.host || 'localhost'
    database = decodeURIComponent(u.pathname.replace(/^\//, ''))
    user = decodeURIComponent(u.username)
  } catch {} // an unparsable URL is refused by the configuration before any connection
  const where = `${host}/${database}`
  const flags = (() => {
    try {
      const u = new URL(url)
      return [u.hostname && `-h ${u.hostname}`, u.port && `-p ${u.port}`, user && `-U ${user}`].filter(Boolean).join(' ')
    } catch {
      return ''
    }
  })()
  switch (code) {
    case '3D000':
      return `database "${database}" does not exist on ${host} (DATABASE_URL): create it with \`createdb ${flags ? `${flags} ` : ''}${database}\`, or set DATABASE_URL to one that exists`
    case '28000':
    case '28P01':
      return user
        ? `PostgreSQL at ${where} refused user "${user}" (${innermostMessage(err)}): check the user and password in DATABASE_URL`
        : `DATABASE_URL (${where}) names no user and PostgreSQL refused the connection (${innermostMessage(err)}): put one in it, as in postgres://USER:PASSWORD@${host}/${database}`
    case 'ECONNREFUSED':
    case 'ENOTFOUND':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
    case 'ETIMEDOUT':
      return `cannot reach PostgreSQL at ${host} for database "${database}" (${code}): is it running, and is the host in DATABASE_URL right?`
    default:
      return null
  }
}

const HINTED = /^(3D000|28000|28P01|ECONNREFUSED|ENOTFOUND|EHOSTUNREACH|ENETUNREACH|ETIMEDOUT)$/

/** The first code this module has a line for, from the error inward through its causes (and an AggregateError's errors). */
function innermostCode(err: unknown, depth = 0): string | null {
  if (!err || typeof err !== 'object' || depth > 8) return null
  const e = err as { code?: unknown; cause?: unknown; errors?: unknown }
  if (typeof e.code === 'string' && HINTED.test(e.code)) return e.code
  for (const inner of [e.cause, ...(Array.isArray(e.errors) ? e.errors : [])]) {
    const c = innermostCode(inner, depth + 1)
    if (c) return c
  }
  return null
}

/** The driver's own words, from the innermost cause. */
function innermostMessage(err: unknown): string {
  let e = err as { message?: unknown; cause?: unknown } | null
  while (e?.cause instanceof Error) e = e.cause as typeof e
  return String(e?.message ?? err)
}
