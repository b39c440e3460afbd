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

/** Waits (at most ~10 s) until a board's feed shows `n` signals: seeding by SQL reaches its tail through the fallback poll. */
export async function untilHead(baseUrl: string, n: number): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const head = (await (await fetch(`${baseUrl}/sw/signals?limit=1`)).json()) as { nextCursor: number }
    if (head.nextCursor >= n) return
    await new Promise((r) => setTimeout(r, 100))
  }
}
