import { bearerToken } from '../../libs/shared/auth/index.js'
import type { Caller } from '../../libs/shared/caller.js'
import { WireError } from '../../libs/shared/domain/index.js'
import type { AccountRow } from './accounts.js'
import type { IdentityContext } from './context.js'
import type { IdentityRow } from './store.js'
import { ACCOUNT_PREFIX, DERIVED_PREFIX, MASTER_PREFIX, unauthorized } from './tokens.js'

const tokenOf = (caller: Caller): string => {
  const token = bearerToken(caller.authorization)
  if (token === null) throw unauthorized('Authorization: Bearer <token> is required')
  return token
}

/**
 * Who calls, by the request's Caller (libs/shared/caller.ts): its token. Lookups go by the token's keyed hash (a unique index), then the stored hash
 * is compared to it in constant time; a token never leaves this module but as its hash.
 */
export function callers(ctx: IdentityContext) {
  const { keys } = ctx

  /** A master token's identity (not decayed), or null. */
  async function byMaster(token: string): Promise<IdentityRow | null> {
    if (!token.startsWith(MASTER_PREFIX)) return null
    const h = keys.hash(token)
    const id = await ctx.identities.byTokenHash(h)
    return id && !id.decayed && keys.same(id.tokenHash, h) ? id : null
  }

  /** Doors only a master token opens (derive, balance, transfer, card, rotate); its identity's call budget is spent. */
  async function master(caller: Caller): Promise<IdentityRow> {
    const token = tokenOf(caller)
    if (token.startsWith(DERIVED_PREFIX))
      throw new WireError('forbidden', 'a derived token can only be verified; this needs the master token')
    const id = await byMaster(token)
    if (!id) throw unauthorized('unknown or revoked token')
    await ctx.budgets.identity(id.id)
    return id
  }

  return {
    byMaster,
    master,

    /**
     * POST /identity/verify: a master token (honoured for every authority) or a derived token
     * (honoured only for the authority it was derived for, until it expires, while its master
     * token's generation is current). 401 invalid, 403 not honoured here.
     */
    async verify(caller: Caller, authority: string): Promise<IdentityRow> {
      const token = tokenOf(caller)
      if (token.startsWith(DERIVED_PREFIX)) {
        const c = keys.open(token)
        if (!c || c.expiresAt * 1000 <= ctx.clock.now()) throw unauthorized('invalid or expired token')
        const id = await ctx.identities.byId(c.identityId)
        if (!id || id.decayed || id.generation !== c.generation) throw unauthorized('invalid or revoked token')
        await ctx.budgets.identity(id.id)
        if (c.authority !== authority) throw new WireError('forbidden', 'this token is not valid for that authority')
        return id
      }
      return master(caller)
    },

    /** An account, by its credential; a wrong one counts against the address like a failed admin token (429 past the budget). */
    async account(caller: Caller): Promise<AccountRow> {
      const token = tokenOf(caller)
      const h = keys.hash(token)
      const acct = token.startsWith(ACCOUNT_PREFIX) ? await ctx.accounts.byCredentialHash(h) : null
      if (acct && keys.same(acct.credentialHash, h)) return acct
      await ctx.budgets.limits.adminFailed(caller.address)
      throw unauthorized('unknown account credential')
    },
  }
}
export type Callers = ReturnType<typeof callers>
