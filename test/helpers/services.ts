import pg from 'pg'
import { bossSchemaName } from '../../libs/shared/db/index.js'
import { Redis } from 'ioredis'

/** The machine's services (or TEST_DATABASE_URL / TEST_REDIS_URL). */
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test'
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379'

/** Fails at once, saying how to start the service, instead of timing out test by test. */
export async function assertServicesUp(): Promise<void> {
  const c = new pg.Client({ connectionString: TEST_DATABASE_URL, connectionTimeoutMillis: 3000 })
  try {
    await c.connect()
    await c.query('select 1')
  } catch (err) {
    // a fresh server has no `test` database: make it once, then go on
    if ((err as { code?: unknown }).code === '3D000' && (await createDatabase(TEST_DATABASE_URL))) return assertServicesUp()
    throw new Error(
      `PostgreSQL at ${TEST_DATABASE_URL} is unreachable (${(err as Error).message}). ` +
        `Start it with: pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start`,
    )
  } finally {
    await c.end().catch(() => {})
  }
  const r = new Redis(TEST_REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null })
  r.on('error', () => {})
  try {
    await r.connect()
    await r.ping()
  } catch (err) {
    throw new Error(
      `Redis at ${TEST_REDIS_URL} is unreachable (${(err as Error).message}). Start it with: ` +
        `redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no`,
    )
  } finally {
    r.disconnect()
  }
}

export const uniqueSchema = (prefix = 't') => `${prefix}_${process.pid}_${Math.random().toString(36).slice(2, 8)}`

/** Drops a board's schema and the pg-boss schema its sweeper made (if any), so no test leaves either behind. */
export async function dropSchema(schema: string): Promise<void> {
  const c = new pg.Client({ connectionString: TEST_DATABASE_URL })
  await c.connect()
  try {
    await c.query(`drop schema if exists "${schema}" cascade`)
    await c.query(`drop schema if exists "${bossSchemaName(schema)}" cascade`)
  } finally {
    await c.end()
  }
}

/** Creates the database a connection string names, through the server's `postgres` database; false if that fails. */
export async function createDatabase(connectionString: string): Promise<boolean> {
  const url = new URL(connectionString)
  const name = decodeURIComponent(url.pathname.slice(1))
  url.pathname = '/postgres'
  const c = new pg.Client({ connectionString: url.toString(), connectionTimeoutMillis: 3000 })
  try {
    await c.connect()
    await c.query(`create database "${name.replaceAll('"', '""')}"`)
    return true
  } catch (err) {
    return (err as { code?: unknown }).code === '42P04' // another test file made it first
  } finally {
    await c.end().catch(() => {})
  }
}
