import type { Db } from '../../libs/shared/db/index.js'

/**
 * The real database, except that the results of queries whose parameters include `marker` wait for
 * `release()`: a test forces a read's page query to answer from a snapshot that predates what
 * happens meanwhile (test/reader/cursor-race.test.ts, test/agents/mcp-events-race.test.ts).
 */
export function holdQueriesWith(db: Db, marker: string) {
  let held = 0
  let open!: () => void
  const gate = new Promise<void>((r) => (open = r))
  const gated: Db = Object.create(db) as Db
  gated.query = async (sql, params) => {
    const result = await db.query(sql, params) // runs now, on PostgreSQL: its snapshot predates the publish
    if (params?.some((p) => p === marker || (Array.isArray(p) && p.includes(marker)))) {
      held++
      await gate
    }
    return result as never
  }
  return { db: gated, held: () => held, release: () => open() }
}
