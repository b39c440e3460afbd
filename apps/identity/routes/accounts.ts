import type { FastifyInstance, FastifyRequest } from 'fastify'
import { z } from 'zod'
import { adminGuard, bearerToken } from '../../../libs/shared/auth/index.js'
import { WireError } from '../../../libs/shared/domain/index.js'
import { callerOf, parseJsonBody } from '../../../libs/shared/http/index.js'
import type { Callers } from '../callers.js'
import type { IdentityContext } from '../context.js'
import { identityEvents } from '../metrics.js'
import { ACCOUNT_PREFIX, MASTER_PREFIX, newAccountId } from '../tokens.js'
import { newIdentity, standing } from './identity.js'

const NewAccount = z.object({ name: z.string().trim().min(1).max(128) })
const NewIdentity = z.object({ displayName: z.string().max(1024).nullish() })
const Claim = z.object({ token: z.string().min(1).max(4096) })
const IdParam = z.object({ id: z.string().min(1).max(64) })

/**
 * Accounts (docs/identity.md "Accounts"): the operator makes them with the admin API
 * (SERVER_ADMIN_TOKEN); each has its own credential, shown once. An account mints claimed
 * (verified) identities, claims instant ones by presenting their master token, and rotates the
 * master tokens of the identities it owns.
 */
export async function accountRoutes(app: FastifyInstance, { ctx, who }: { ctx: IdentityContext; who: Callers }) {
  const guard = adminGuard(ctx.cfg.secrets.adminToken, ctx.budgets.limits)
  const admin = (req: FastifyRequest) => {
    const caller = callerOf(req)
    return guard(caller.authorization, caller.address)
  }
  const n = ctx.cfg.identityNetwork

  app.post('/admin/accounts', async (req, reply) => {
    await admin(req)
    const { name } = NewAccount.parse(parseJsonBody(req.body))
    const credential = ctx.keys.mint(ACCOUNT_PREFIX)
    const a = await ctx.accounts.create(newAccountId(), name, ctx.keys.hash(credential))
    return reply.code(201).header('cache-control', 'no-store').send({ accountId: a.id, name: a.name, credential })
  })

  app.post('/admin/accounts/:id/credential', async (req, reply) => {
    await admin(req)
    const { id } = IdParam.parse(req.params)
    const credential = ctx.keys.mint(ACCOUNT_PREFIX)
    if (!(await ctx.accounts.rotate(id, ctx.keys.hash(credential)))) throw new WireError('not_found', 'no such account')
    return reply.header('cache-control', 'no-store').send({ accountId: id, credential })
  })

  app.get('/accounts/identities', async (req) => {
    const a = await who.account(callerOf(req))
    return { accountId: a.id, identities: await ctx.accounts.identities(a.id) }
  })

  app.post('/accounts/identities', async (req, reply) => {
    const a = await who.account(callerOf(req))
    const { displayName } = NewIdentity.parse(parseJsonBody(req.body))
    const { id, token } = await newIdentity(ctx, displayName, a.id, n.claimedGrant)
    return reply
      .code(201)
      .header('cache-control', 'no-store')
      .send({ ...standing(id), token })
  })

  // possession of an instant identity's master token proves control of it
  app.post('/accounts/claim', async (req) => {
    const a = await who.account(callerOf(req))
    const { token } = Claim.parse(parseJsonBody(req.body))
    const found = bearerToken(`Bearer ${token}`) === token ? await who.byMaster(token) : null
    if (!found) throw new WireError('unauthorized', 'unknown or revoked master token')
    if (found.accountId !== null) throw new WireError('forbidden', 'this identity is already claimed')
    const claimed = await ctx.identities.claim(found.id, a.id, n.claimedGrant)
    if (!claimed) throw new WireError('forbidden', 'this identity is already claimed')
    identityEvents.inc({ event: 'claimed' })
    return standing(claimed)
  })

  app.post('/accounts/identities/:id/token', async (req, reply) => {
    const a = await who.account(callerOf(req))
    const { id } = IdParam.parse(req.params)
    const cur = await ctx.identities.byId(id)
    if (!cur || cur.decayed || cur.accountId !== a.id) throw new WireError('not_found', 'no such identity in this account')
    const token = ctx.keys.mint(MASTER_PREFIX)
    await ctx.identities.rotate(id, ctx.keys.hash(token))
    identityEvents.inc({ event: 'rotated' })
    return reply.header('cache-control', 'no-store').send({ identityId: id, token })
  })
}
