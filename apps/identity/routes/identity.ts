import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { cleanName } from '../../../libs/shared/auth/index.js'
import { invalid } from '../../../libs/shared/domain/index.js'
import { DOOR, callerOf, parseJsonBody } from '../../../libs/shared/http/index.js'
import type { Callers } from '../callers.js'
import type { IdentityContext } from '../context.js'
import { identityEvents } from '../metrics.js'
import type { IdentityRow } from '../store.js'
import { canonicalAuthority, DERIVED_TTL_MAX, DERIVED_TTL_MIN, MASTER_PREFIX, newIdentityId } from '../tokens.js'

/** The verify answer, as boards read it (libs/shared/auth/network.ts): userId is the owning account, null for an instant identity. */
export const standing = (id: IdentityRow) => ({
  identityId: id.id,
  userId: id.accountId,
  displayName: id.displayName,
  verified: id.accountId !== null,
  bits: id.bits,
})

/** A new identity and its master token, shown once (the network keeps only its hash); counted as registered. */
export async function newIdentity(ctx: IdentityContext, displayName: string | null | undefined, accountId: string | null, grant: number) {
  const token = ctx.keys.mint(MASTER_PREFIX)
  const id = await ctx.identities.create({
    id: newIdentityId(),
    displayName: cleanName(displayName),
    accountId,
    tokenHash: ctx.keys.hash(token),
    grant,
    now: ctx.clock.now(),
  })
  identityEvents.inc({ event: 'registered' })
  return { id, token }
}

const Register = z.object({ displayName: z.string().max(1024).nullish() }) // a board's register_identity sends {authority}: ignored
const Derive = z.object({ authority: z.string().max(300), ttl: z.number().int().min(DERIVED_TTL_MIN).max(DERIVED_TTL_MAX).default(3600) })

const authorityOf = (v: unknown): string => {
  const a = canonicalAuthority(v)
  if (a === null) throw invalid('authority: must be host or host:port')
  return a
}
const bodyOf = (body: unknown) => (body === undefined || body === null || body === '' ? {} : parseJsonBody(body))

/** Registration, verify, derived tokens, balance and rotation (docs/identity.md "Running an identity network"). */
export async function identityRoutes(app: FastifyInstance, { ctx, who }: { ctx: IdentityContext; who: Callers }) {
  const n = ctx.cfg.identityNetwork

  // the instant tier: no human in the loop; the token is shown here once and never again
  app.post('/identity/register', async (req, reply) => {
    await ctx.budgets.register(callerOf(req).address)
    const { displayName } = Register.parse(bodyOf(req.body))
    const { id, token } = await newIdentity(ctx, displayName, null, n.instantGrant)
    return reply
      .code(201)
      .header('cache-control', 'no-store')
      .send({ identityId: id.id, token, verified: false, bits: id.bits, displayName: id.displayName })
  })

  // boards call this for every publish they have not cached (30 s): its own per-address budget, not the read budget
  app.post('/identity/verify', { config: DOOR }, async (req) => {
    await ctx.budgets.verify(callerOf(req).address)
    const authority = authorityOf(bodyOf(req.body).authority)
    const id = await who.verify(callerOf(req), authority).catch((err: unknown) => {
      identityEvents.inc({ event: 'verify_refused' })
      throw err
    })
    identityEvents.inc({ event: 'verified' })
    return standing(id)
  })

  app.post('/identity/tokens/derive', async (req, reply) => {
    const id = await who.master(callerOf(req))
    const d = Derive.parse(bodyOf(req.body))
    const authority = authorityOf(d.authority)
    const expiresAt = Math.floor(ctx.clock.now() / 1000) + d.ttl
    const token = ctx.keys.derive({ identityId: id.id, authority, generation: id.generation, expiresAt })
    identityEvents.inc({ event: 'derived' })
    return reply
      .header('cache-control', 'no-store')
      .send({ token, authority, identityId: id.id, expiresAt: new Date(expiresAt * 1000).toISOString() })
  })

  app.get('/identity/balance', async (req) => {
    const id = await who.master(callerOf(req))
    return { identityId: id.id, bits: id.bits, verified: id.accountId !== null }
  })

  // revoking: a new master token; the old one and every token derived from it stop verifying at once
  app.post('/identity/tokens/rotate', async (req, reply) => {
    const id = await who.master(callerOf(req))
    const token = ctx.keys.mint(MASTER_PREFIX)
    const next = await ctx.identities.rotate(id.id, ctx.keys.hash(token))
    if (!next) throw invalid('this identity can no longer be changed')
    identityEvents.inc({ event: 'rotated' })
    return reply.header('cache-control', 'no-store').send({ identityId: next.id, token })
  })
}
