import type { Test } from 'tap'
import { ident, migrate, postgresDb, type NewSignal } from '../../libs/shared/db/index.js'
import { assertServicesUp, dropSchema, TEST_DATABASE_URL, uniqueSchema } from './services.js'

/** A fresh schema on the test database, migrated, and a pool of `max` connections to it; both gone with the test. */
export async function migratedSchema(t: Test, prefix: string, max = 2) {
  await assertServicesUp()
  const schema = uniqueSchema(prefix)
  const db = postgresDb(TEST_DATABASE_URL, { max })
  t.teardown(async () => (await db.close(), await dropSchema(schema)))
  await migrate(db, schema)
  return { db, schema, s: ident(schema) }
}

/** A signal as the publish path hands it to the batch insert (db/signals/write.ts): `id` and its tags, now, for an hour. */
export const newSignal = (id: string, tags: string[] = [], origin = 'fp_0123456789abcdef0123'): NewSignal => ({
  id,
  origin,
  originName: null,
  originUri: `sw://board.test/identities/${origin}`,
  originVerified: true,
  type: 'broadcast',
  tags,
  payloadText: `{"$type":"broadcast","$tags":${JSON.stringify(tags)},"id":"${id}"}`,
  ttl: 3600,
  refId: null,
  createdAtMs: Date.now(),
  expiresAtMs: Date.now() + 3_600_000,
})
