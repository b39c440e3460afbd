import type { Ident, Queryable } from '../types.js'

/** The board's random id (migrations/0005_board_id.sql): names its wake-up channels and Redis keys. */
export async function readBoardId(db: Queryable, schema: Ident): Promise<string> {
  const { rows } = await db.query<{ board_id: string }>(`select board_id from ${schema}.board`)
  const id = rows[0]?.board_id
  if (!id) throw new Error(`no board row in ${schema}: run the migrations first`)
  return id
}
