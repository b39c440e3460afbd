import type { Db, Ident, Queryable } from '../../libs/shared/db/index.js'

/** An identity as the network keeps it (never its token: only the token's keyed hash). */
export interface IdentityRow {
  id: string
  displayName: string | null
  accountId: string | null
  tokenHash: Buffer
  generation: number
  bits: number
  decayed: boolean
}

const COLUMNS = 'id, display_name, account_id, token_hash, generation, bits, decayed_at is not null as decayed'
type Raw = {
  id: string
  display_name: string | null
  account_id: string | null
  token_hash: Buffer | Uint8Array
  generation: number
  bits: string | number | bigint
  decayed: boolean
}
const row = (r: Raw): IdentityRow => ({
  id: r.id,
  displayName: r.display_name,
  accountId: r.account_id,
  tokenHash: Buffer.from(r.token_hash),
  generation: Number(r.generation),
  bits: Number(r.bits), // bigint in the table, at most 2^53 - 1 by its check: exact as a number
  decayed: r.decayed,
})
const at = (ms: number) => new Date(ms).toISOString()

/** Identities, their master tokens' hashes, grants and decay; one statement or one transaction each. */
export function identityStore(db: Db, s: Ident) {
  const one = async (q: Queryable, where: string, params: unknown[]) => {
    const r = await q.query<Raw>(`select ${COLUMNS} from ${s}.identities where ${where}`, params, { prepared: true })
    return r.rows[0] ? row(r.rows[0]) : null
  }
  const grant = (q: Queryable, id: string, bits: number) =>
    bits > 0 ? q.query(`insert into ${s}.ledger (identity_id, delta, kind) values ($1, $2, 'grant')`, [id, bits]) : Promise.resolve()

  return {
    byTokenHash: (hash: Buffer) => one(db, 'token_hash = $1', [hash]),
    byId: (id: string) => one(db, 'id = $1', [id]),

    /** A new identity with its grant (instant: no account; claimed: made by an account). */
    create(o: {
      id: string
      displayName: string | null
      accountId: string | null
      tokenHash: Buffer
      grant: number
      now: number
    }): Promise<IdentityRow> {
      return db.transaction(async (tx) => {
        const r = await tx.query<Raw>(
          `insert into ${s}.identities (id, display_name, account_id, token_hash, bits, last_earned_at) values ($1, $2, $3, $4, $5, $6) returning ${COLUMNS}`,
          [o.id, o.displayName, o.accountId, o.tokenHash, o.grant, at(o.now)],
        )
        await grant(tx, o.id, o.grant)
        return row(r.rows[0]!)
      })
    },

    /** A new master token: the old one and every token derived from it stop working. */
    async rotate(id: string, tokenHash: Buffer): Promise<IdentityRow | null> {
      const r = await db.query<Raw>(
        `update ${s}.identities set token_hash = $2, generation = generation + 1 where id = $1 and decayed_at is null returning ${COLUMNS}`,
        [id, tokenHash],
      )
      return r.rows[0] ? row(r.rows[0]) : null
    },

    /** An account takes an instant identity: verified from now on, its balance topped up to the claimed grant. */
    claim(id: string, accountId: string, claimedGrant: number): Promise<IdentityRow | null> {
      return db.transaction(async (tx) => {
        const cur = await one(tx, 'id = $1 and decayed_at is null for update', [id])
        if (!cur || cur.accountId !== null) return null
        const topUp = Math.max(0, claimedGrant - cur.bits)
        const r = await tx.query<Raw>(`update ${s}.identities set account_id = $2, bits = bits + $3 where id = $1 returning ${COLUMNS}`, [
          id,
          accountId,
          topUp,
        ])
        await grant(tx, id, topUp)
        return row(r.rows[0]!)
      })
    },

    /**
     * Instant identities that earned no bits since `cutoff` decay: their tokens stop verifying and
     * their balance goes (a `decay` ledger row each). At most `batch` per call; returns how many.
     */
    async decay(cutoff: number, now: number, batch = 1000): Promise<number> {
      const r = await db.query<{ n: string | number }>(
        `with old as (
           select id, bits from ${s}.identities
            where account_id is null and decayed_at is null and last_earned_at < $1
            order by last_earned_at limit $3 for update skip locked),
         gone as (update ${s}.identities i set decayed_at = $2, bits = 0 from old where i.id = old.id returning i.id, old.bits),
         led as (insert into ${s}.ledger (identity_id, delta, kind) select id, -bits, 'decay' from gone where bits > 0 returning 1)
         select count(*) as n from gone`,
        [at(cutoff), at(now), batch],
      )
      return Number(r.rows[0]?.n ?? 0)
    },

    async setCard(id: string, card: unknown): Promise<void> {
      await db.query(`update ${s}.identities set card = $2 where id = $1`, [id, JSON.stringify(card)])
    },
    async card(id: string): Promise<{ identity: IdentityRow; card: Record<string, unknown> | null } | null> {
      const r = await db.query<Raw & { card: unknown }>(
        `select ${COLUMNS}, card from ${s}.identities where id = $1 and decayed_at is null`,
        [id],
      )
      const c = r.rows[0]
      if (!c) return null
      const card = typeof c.card === 'string' ? (JSON.parse(c.card) as Record<string, unknown>) : (c.card as Record<string, unknown> | null)
      return { identity: row(c), card }
    },
  }
}
export type IdentityStore = ReturnType<typeof identityStore>
