import type { Db, Ident } from '../../libs/shared/db/index.js'

export interface TransferRequest {
  from: string
  to: string
  amount: number
  memo: string
  /** Idempotency-Key: the same key from the same sender answers the first result again. */
  key: string | null
  now: number
}

export interface TransferResult {
  outcome: 'ok' | 'insufficient_bits' | 'not_found'
  from: string
  to: string
  amount: number
  memo: string
  /** The sender's balance once the transfer is done (or refused). */
  balance: number
  /** An earlier request with the same key answered this; `conflict`: that request was a different transfer. */
  replayed: boolean
  conflict: boolean
}

type Stored = { to_id: string; amount: string | number; memo: string; outcome: TransferResult['outcome']; balance_after: string | number }

/**
 * Moves bits between two identities in one transaction: both identities locked in id order (no
 * deadlock between A→B and B→A; a concurrent request with the same Idempotency-Key waits there and
 * then answers what the first answered), the transfer's row, a conditional debit, the credit, and
 * the two ledger rows. A refusal (insufficient bits, unknown recipient) is
 * stored too, so a retry gets the same answer.
 */
export function ledger(db: Db, s: Ident) {
  const replay = (r: TransferRequest, st: Stored): TransferResult => {
    const conflict = st.to_id !== r.to || Number(st.amount) !== r.amount || st.memo !== r.memo
    return {
      outcome: st.outcome,
      from: r.from,
      to: st.to_id,
      amount: Number(st.amount),
      memo: st.memo,
      balance: Number(st.balance_after),
      replayed: true,
      conflict,
    }
  }

  return {
    async transfer(r: TransferRequest): Promise<TransferResult> {
      const done = await db.transaction(async (tx): Promise<TransferResult | null> => {
        // both rows locked first, in id order: no deadlock between A→B and B→A, and a retry of the same
        // key (same sender) waits here for the first to commit. NO KEY UPDATE: the foreign keys'
        // KEY SHARE locks on the same rows (the transfer's and the ledger's rows) don't conflict with it.
        const locked = await tx.query<{ id: string; bits: string | number }>(
          `select id, bits from ${s}.identities where id = any($1::text[]) and decayed_at is null order by id for no key update`,
          [[r.from, r.to]],
        )
        const ins = await tx.query<{ id: string }>(
          `insert into ${s}.transfers (from_id, to_id, amount, memo, idempotency_key, outcome, balance_after, created_at)
           values ($1, $2, $3, $4, $5, 'ok', 0, $6) on conflict (from_id, idempotency_key) do nothing returning id`,
          [r.from, r.to, r.amount, r.memo, r.key, new Date(r.now).toISOString()],
        )
        const id = ins.rows[0]?.id
        if (id === undefined) return null // the key's first request committed: answer what it answered (below)
        const bitsOf = (who: string) => locked.rows.find((x) => x.id === who)
        const sender = bitsOf(r.from)
        const before = Number(sender?.bits ?? 0)
        let outcome: TransferResult['outcome'] = 'ok'
        if (!sender || !bitsOf(r.to)) outcome = 'not_found'
        else if (before < r.amount) outcome = 'insufficient_bits'
        const balance = outcome === 'ok' ? before - r.amount : before
        if (outcome === 'ok') {
          await tx.query(`update ${s}.identities set bits = bits - $2 where id = $1`, [r.from, r.amount])
          await tx.query(`update ${s}.identities set bits = bits + $2, last_earned_at = greatest(last_earned_at, $3) where id = $1`, [
            r.to,
            r.amount,
            new Date(r.now).toISOString(),
          ])
          await tx.query(
            `insert into ${s}.ledger (identity_id, delta, kind, transfer_id) values ($1, $2, 'transfer', $5), ($3, $4, 'transfer', $5)`,
            [r.from, -r.amount, r.to, r.amount, id],
          )
        }
        await tx.query(`update ${s}.transfers set outcome = $2, balance_after = $3 where id = $1`, [id, outcome, balance])
        return { outcome, from: r.from, to: r.to, amount: r.amount, memo: r.memo, balance, replayed: false, conflict: false }
      })
      if (done) return done
      const st = await db.query<Stored>(
        `select to_id, amount, memo, outcome, balance_after from ${s}.transfers where from_id = $1 and idempotency_key = $2`,
        [r.from, r.key],
      )
      return replay(r, st.rows[0]!)
    },
  }
}
export type Ledger = ReturnType<typeof ledger>
