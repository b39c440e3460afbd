import { mkdirSync } from 'node:fs'
import { PGlite } from '@electric-sql/pglite'
import type { Db, QueryResult } from './types.js'

/**
 * Embedded PostgreSQL (PGlite, WASM) in a local directory, behind the same Db interface as `pg`.
 * One backend session: PGlite runs one statement at a time and a transaction holds it exclusively.
 */
export async function pgliteDb(dataDir: string): Promise<Db & { readonly pglite: PGlite }> {
  if (!dataDir.startsWith('memory://')) mkdirSync(dataDir, { recursive: true })
  const db = await PGlite.create(dataDir)
  const wrap =
    (q: { query: PGlite['query'] }) =>
    async <R>(sql: string, params?: unknown[]): Promise<QueryResult<R>> => {
      const r = await q.query<R>(sql, params as unknown[])
      // @NOTE PGlite reports affectedRows 0 for a SELECT: count the rows it returned too
      return { rows: r.rows, rowCount: Math.max(r.rows.length, r.affectedRows ?? 0) }
    }
  return {
    kind: 'embedded',
    pglite: db,
    query: wrap(db),
    async exec(sql) {
      await db.exec(sql)
    },
    transaction: (fn) => db.transaction((tx) => fn({ query: wrap(tx), exec: async (sql) => void (await tx.exec(sql)) })),
    close: () => db.close(),
  }
}
