import type { Ident, Queryable } from '../types.js'

/** The board's random id (migrations/0005_board_id.sql): names its wake-up channels and Redis keys. */
export async function readBoardId(db: Queryable, schema: Ident): Promise<string> {
  const { rows } = await db.query<{ board_id: string }>(`select board_id from ${schema}.board`)
  const id = rows[0]?.board_id
  if (!id) throw new Error(`no board row in ${schema}: run the migrations first`)
  return id
}

/**
 * The fingerprint key the board carries (migrations/0008_fingerprint_key.sql), or null. Read through
 * to_jsonb so a process started before that migration ran finds null instead of failing.
 */
export async function readStoredFingerprintKey(db: Queryable, schema: Ident): Promise<string | null> {
  const { rows } = await db.query<{ key: string | null }>(`select to_jsonb(b) ->> 'fingerprint_key' as key from ${schema}.board b`)
  return rows[0]?.key ?? null
}
