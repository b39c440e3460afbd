import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import pg from 'pg'
import { projectPath } from '../paths.js'
import { ident, type Db, type Tx } from './types.js'

export interface MigrationReport {
  applied: string[]
}

export interface Migration {
  name: string
  sql: string
  /** First line `-- no-transaction`: run on its own, outside a transaction (`create index concurrently`). */
  noTransaction: boolean
}

const FILE_RE = /^(\d{4})_[a-z0-9_]+\.sql$/
const NO_TRANSACTION_RE = /^--\s*no-transaction\s*$/

/** The numbered SQL files in `dir` (default migrations/), in order. */
export function listMigrations(dir = projectPath('migrations')): Migration[] {
  return readdirSync(dir)
    .filter((f) => FILE_RE.test(f))
    .sort()
    .map((name) => {
      const sql = readFileSync(join(dir, name), 'utf8')
      return { name, sql, noTransaction: NO_TRANSACTION_RE.test(sql.split('\n', 1)[0]!.trim()) }
    })
}

/**
 * Applies pending migrations to `schema`. On PostgreSQL pass the direct URL (never a transaction
 * pooler): the runner holds one session for the whole run and takes a session-level advisory lock
 * on it, so any number of processes may start at once: the first applies, the others wait and
 * then find nothing to do. Each file runs in its own transaction together with its
 * `schema_migrations` row, except a file whose first line is `-- no-transaction`: it runs alone,
 * as one statement (PostgreSQL refuses `create index concurrently` in a transaction or next to
 * other statements), and its row is written after it succeeds. PGlite, one session by nature,
 * is passed as a Db.
 */
export async function migrate(target: string | Db, schema: string, opts: MigrateOptions = {}): Promise<MigrationReport> {
  if (typeof target !== 'string') return run(target, schema, opts)
  const client = new pg.Client({ connectionString: target, application_name: 'wire-migrate', connectionTimeoutMillis: 10_000 })
  client.on('error', () => {}) // a dropped connection also fails the pending query, which reports it
  await client.connect()
  try {
    return await run(clientSession(client), schema, opts)
  } finally {
    await client.end().catch(() => {})
  }
}

/** What the runner needs: one session that can also open transactions. */
type Session = Pick<Db, 'query' | 'exec' | 'transaction'>

export interface MigrateOptions {
  dir?: string
  /** Apply files up to this one only (a restore brings the schema to its backup's level first). */
  until?: string
}

async function run(db: Session, schema: string, { dir, until }: MigrateOptions): Promise<MigrationReport> {
  const s = ident(schema)
  const applied: string[] = []
  await db.query(`select pg_advisory_lock(hashtext($1))`, [`wire:migrate:${schema}`])
  try {
    await db.exec(`create schema if not exists ${s};
      create table if not exists ${s}.schema_migrations (name text primary key, applied_at timestamptz not null default now())`)
    for (const m of listMigrations(dir)) {
      if (until !== undefined && m.name > until) break
      const done = await db.query(`select 1 from ${s}.schema_migrations where name = $1`, [m.name])
      if (done.rowCount > 0) continue
      if (m.noTransaction) {
        await db.exec(`set search_path to ${s}, public`)
        try {
          await db.exec(m.sql)
        } finally {
          await db.exec(`reset search_path`)
        }
        await db.query(`insert into ${s}.schema_migrations (name) values ($1)`, [m.name])
      } else {
        await db.transaction(async (tx) => {
          await tx.exec(`set local search_path to ${s}, public;\n${m.sql}`)
          await tx.query(`insert into ${s}.schema_migrations (name) values ($1)`, [m.name])
        })
      }
      applied.push(m.name)
    }
  } finally {
    await db.query(`select pg_advisory_unlock(hashtext($1))`, [`wire:migrate:${schema}`]).catch(() => {})
  }
  return { applied }
}

/** One `pg` client as a Session: its transactions are begin … commit on that same connection. */
function clientSession(client: pg.Client): Session {
  const tx: Tx = {
    query: async <R>(sql: string, params?: unknown[]) => {
      const r = await client.query(sql, params as unknown[])
      return { rows: r.rows as R[], rowCount: r.rowCount ?? 0 }
    },
    exec: async (sql: string) => void (await client.query(sql)),
  }
  return {
    ...tx,
    async transaction(fn) {
      await client.query('begin')
      try {
        const result = await fn(tx)
        await client.query('commit')
        return result
      } catch (err) {
        await client.query('rollback').catch(() => {})
        throw err
      }
    },
  }
}
