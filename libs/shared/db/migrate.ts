import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { projectPath } from '../paths.js'
import { ident, type Db } from './types.js'

export interface MigrationReport {
  applied: string[]
}

const FILE_RE = /^(\d{4})_[a-z0-9_]+\.sql$/

/** The numbered SQL files in migrations/, in order. */
export function listMigrations(dir = projectPath('migrations')): Array<{ name: string; sql: string }> {
  return readdirSync(dir)
    .filter((f) => FILE_RE.test(f))
    .sort()
    .map((name) => ({ name, sql: readFileSync(join(dir, name), 'utf8') }))
}

/**
 * Applies pending migrations to `schema`, each file in its own transaction together with its
 * `schema_migrations` row, under a transaction-scoped advisory lock so any number of processes
 * may start at once: the first applies, the others wait and then find nothing to do.
 */
export async function migrate(db: Db, schema: string, dir?: string): Promise<MigrationReport> {
  const s = ident(schema)
  const applied: string[] = []
  for (const m of listMigrations(dir)) {
    await db.transaction(async (tx) => {
      await tx.query(`select pg_advisory_xact_lock(hashtext($1))`, [`wire:migrate:${schema}`])
      await tx.exec(`create schema if not exists ${s};
        create table if not exists ${s}.schema_migrations (name text primary key, applied_at timestamptz not null default now())`)
      const done = await tx.query(`select 1 from ${s}.schema_migrations where name = $1`, [m.name])
      if (done.rowCount > 0) return
      await tx.exec(`set local search_path to ${s}, public;\n${m.sql}`)
      await tx.query(`insert into ${s}.schema_migrations (name) values ($1)`, [m.name])
      applied.push(m.name)
    })
  }
  return { applied }
}
