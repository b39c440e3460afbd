import type { Ident, Queryable } from '../types.js'

/** Whether an origin has any signal on this board (signals_origin_seq_idx: one index probe). */
export function originsOf(db: Queryable, s: Ident) {
  const sql = `select 1 from ${s}.signals where origin = $1 limit 1`
  return {
    async hasPublished(origin: string): Promise<boolean> {
      return (await db.query(sql, [origin])).rowCount > 0
    },
  }
}
export type Origins = ReturnType<typeof originsOf>
