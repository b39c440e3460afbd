import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { invalid, WireError } from '../../../libs/shared/domain/index.js'
import { callerOf, parseJsonBody } from '../../../libs/shared/http/index.js'
import type { Callers } from '../callers.js'
import type { IdentityContext } from '../context.js'
import { identityEvents } from '../metrics.js'

/** Most bits one transfer moves: amounts stay exact JSON numbers (2^53 - 1). */
const AMOUNT_MAX = Number.MAX_SAFE_INTEGER
const Transfer = z.object({
  to: z.string().min(1).max(64),
  amount: z.number().int('amount: must be a whole number of bits').min(1).max(AMOUNT_MAX),
  memo: z.string().max(140).default(''),
})
// printable ASCII, as HTTP header values of other APIs' idempotency keys
const KEY = /^[\x21-\x7e]{1,128}$/

/** POST /bits/transfer (master token): exactly once per Idempotency-Key, the same answer to every retry. */
export async function bitsRoutes(app: FastifyInstance, { ctx, who }: { ctx: IdentityContext; who: Callers }) {
  app.post('/bits/transfer', async (req, reply) => {
    const caller = callerOf(req)
    const from = await who.master(caller)
    const t = Transfer.parse(parseJsonBody(req.body))
    const header = caller.idempotencyKey
    if (header !== undefined && (typeof header !== 'string' || !KEY.test(header)))
      throw invalid('Idempotency-Key: 1 to 128 printable ASCII characters')
    if (t.to === from.id) throw invalid('to: an identity cannot send bits to itself')
    const r = await ctx.ledger.transfer({
      from: from.id,
      to: t.to,
      amount: t.amount,
      memo: t.memo,
      key: header ?? null,
      now: ctx.clock.now(),
    })
    if (r.conflict) throw invalid('Idempotency-Key was already used for a different transfer')
    if (r.replayed) reply.header('idempotent-replayed', 'true')
    identityEvents.inc({ event: r.outcome === 'ok' ? 'transferred' : 'transfer_refused' })
    if (r.outcome === 'not_found') throw new WireError('not_found', 'no such identity', { to: r.to })
    if (r.outcome === 'insufficient_bits')
      throw new WireError('insufficient_bits', 'not enough bits', { required: r.amount, bits: r.balance })
    return { ok: true, from: r.from, to: r.to, amount: r.amount, memo: r.memo, balance: r.balance }
  })
}
