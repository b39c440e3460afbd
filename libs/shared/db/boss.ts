import { createHash } from 'node:crypto'
import type { PGlite } from '@electric-sql/pglite'
import type { ConstructorOptions, Db as BossDatabase } from 'pg-boss'
import { pgDeadlines, type LinkDeadlines } from './postgres.js'
import type { Db } from './types.js'

/** Where pg-boss keeps its tables: a schema of its own beside the board's, never in migrations/. */
export function bossSchemaName(schema: string): string {
  const name = `${schema}_boss`
  if (name.length <= 63) return name
  // identifiers stop at 63 bytes: keep a readable prefix and make the rest unique to the board's schema
  const hash = createHash('sha256').update(schema).digest('hex').slice(0, 8)
  return `${schema.slice(0, 63 - '_boss'.length - 9)}_${hash}_boss`
}

/**
 * How pg-boss reaches the database. PostgreSQL: a small pool of its own (its LISTEN and transaction
 * support need pg's pool), named `pool.applicationName`, with the connections' keepalive and
 * deadlines (`links`: DB_*) but the query's. Embedded: the process's one PGlite, through
 * pgliteBossDatabase.
 */
export function bossConnection(
  primary: Db,
  url: string | undefined,
  links: LinkDeadlines = {},
  pool = { applicationName: 'wire-sweeper', max: 3 },
): ConstructorOptions {
  const pglite = (primary as Partial<{ pglite: PGlite }>).pglite
  if (primary.kind === 'embedded' && pglite) return { db: pgliteBossDatabase(pglite), backend: 'pglite', reindex: false }
  if (!url) throw new Error('pg-boss on PostgreSQL needs the database URL')
  // no query deadline: pg-boss's own migrations may run long, and its work waits on nobody (a
  // statement on a dead link ends when TCP gives up); its idle connections are still probed
  return { ...pgDeadlines({ ...links, queryTimeoutMs: 0 }), connectionString: url, max: pool.max, application_name: pool.applicationName }
}

/**
 * pg-boss's IDatabase over PGlite. Statements with parameters are single statements (extended
 * protocol); parameterless text may hold several, which only `exec` runs.
 */
export function pgliteBossDatabase(pglite: PGlite): BossDatabase {
  return {
    async executeSql(text: string, values?: unknown[]) {
      if (values?.length) return { rows: (await pglite.query(text, values)).rows }
      // @NOTE pg-boss sends its locked sections as one text `BEGIN; …; COMMIT`. PGlite is a single
      // session shared with the writer and reader: if such a text failed halfway, the session would
      // stay in an aborted transaction until someone rolled it back, and a publish queued meanwhile
      // would fail. transaction() holds the session for the whole text and rolls back before letting
      // anything else in (the inner BEGIN and the outer COMMIT are harmless warnings).
      const results = /^\s*begin\b/i.test(text) ? await pglite.transaction((tx) => tx.exec(text)) : await pglite.exec(text)
      // a RETURNING in the middle of the text must not be lost behind the trailing COMMIT
      return { rows: results.flatMap((r) => r.rows) }
    },
  }
}
