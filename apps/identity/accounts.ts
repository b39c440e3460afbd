import type { Db, Ident } from '../../libs/shared/db/index.js'

export interface AccountRow {
  id: string
  name: string
  credentialHash: Buffer
}

/** Accounts (docs/identity.md "Accounts"): made by the operator, each with one credential, kept as its keyed hash. */
export function accountStore(db: Db, s: Ident) {
  type Raw = { id: string; name: string; credential_hash: Buffer | Uint8Array }
  const row = (r: Raw): AccountRow => ({ id: r.id, name: r.name, credentialHash: Buffer.from(r.credential_hash) })
  return {
    async create(id: string, name: string, credentialHash: Buffer): Promise<AccountRow> {
      const r = await db.query<Raw>(
        `insert into ${s}.accounts (id, name, credential_hash) values ($1, $2, $3) returning id, name, credential_hash`,
        [id, name, credentialHash],
      )
      return row(r.rows[0]!)
    },
    async byCredentialHash(hash: Buffer): Promise<AccountRow | null> {
      const r = await db.query<Raw>(`select id, name, credential_hash from ${s}.accounts where credential_hash = $1`, [hash], {
        prepared: true,
      })
      return r.rows[0] ? row(r.rows[0]) : null
    },
    /** A new credential: the old one stops working at once. */
    async rotate(id: string, credentialHash: Buffer): Promise<boolean> {
      return (await db.query(`update ${s}.accounts set credential_hash = $2 where id = $1`, [id, credentialHash])).rowCount > 0
    },
    async identities(id: string): Promise<Array<{ id: string; displayName: string | null; bits: number }>> {
      const r = await db.query<{ id: string; display_name: string | null; bits: string | number }>(
        `select id, display_name, bits from ${s}.identities where account_id = $1 and decayed_at is null order by created_at limit 1000`,
        [id],
      )
      return r.rows.map((x) => ({ id: x.id, displayName: x.display_name, bits: Number(x.bits) }))
    },
  }
}
export type AccountStore = ReturnType<typeof accountStore>
