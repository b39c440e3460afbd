import pg from 'pg'

/** One statement on a connection of its own (setup and counters around a run, never the load itself). */
export function sqlOn(databaseUrl: string) {
  return async function sql<T extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values: unknown[] = []) {
    const c = new pg.Client({ connectionString: databaseUrl })
    await c.connect()
    try {
      return (await c.query<T>(text, values)).rows
    } finally {
      await c.end()
    }
  }
}
