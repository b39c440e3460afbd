import pg from 'pg'
import type { Test } from 'tap'
import { processRole, type ProcessRole } from '../aggregator/processes.js'
import { TEST_DATABASE_URL, uniqueSchema } from '../helpers/services.js'

export { ADMIN } from '../aggregator/support.js'

export interface IdentityProcess extends ProcessRole {
  schema: string
  /** POST/GET/PUT JSON to the network: status, parsed body, headers. */
  call(
    method: string,
    path: string,
    o?: { token?: string; body?: unknown; headers?: Record<string, string> },
  ): Promise<{ status: number; body: any; headers: Headers }>
  /** One SQL query on the network's schema. */
  sql<R = Record<string, unknown>>(text: string, params?: unknown[]): Promise<R[]>
}

/** The identity network (`dist/apps/identity/main.js`) as a real process on PostgreSQL, in a schema of its own. */
export async function startIdentityProcess(t: Test, env: Record<string, string> = {}): Promise<IdentityProcess> {
  const schema = uniqueSchema('idn')
  const role = await processRole(
    t,
    'dist/apps/identity/main.js',
    { IDENTITY_PG_SCHEMA: schema, LOG_LEVEL: 'debug', ...env },
    /"msg":"listening"/,
    schema,
  )
  const call: IdentityProcess['call'] = async (method, path, o = {}) => {
    const headers: Record<string, string> = { ...o.headers }
    if (o.token !== undefined) headers.authorization = `Bearer ${o.token}`
    if (o.body !== undefined) headers['content-type'] = 'application/json'
    const res = await fetch(role.url + path, { method, headers, ...(o.body !== undefined && { body: JSON.stringify(o.body) }) })
    const text = await res.text()
    return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers }
  }
  const sql = async <R>(text: string, params: unknown[] = []) => {
    const c = new pg.Client({ connectionString: TEST_DATABASE_URL })
    await c.connect()
    try {
      await c.query(`set search_path to "${schema}"`)
      return (await c.query(text, params)).rows as R[]
    } finally {
      await c.end()
    }
  }
  return { ...role, schema, call, sql }
}
