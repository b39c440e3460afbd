import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { WireError } from '../../../libs/shared/domain/index.js'
import { callerOf, parseJsonBody } from '../../../libs/shared/http/index.js'
import type { Callers } from '../callers.js'
import type { IdentityContext } from '../context.js'
import { DERIVED_TTL_MAX, DERIVED_TTL_MIN } from '../tokens.js'

/** The body of a card an identity asserts: an A2A AgentCard, at most this big once serialised. */
const CARD_MAX_BYTES = 16 * 1024
const Card = z.object({ name: z.string().min(1).max(256) }).passthrough()
const IdParam = z.object({ id: z.string().min(1).max(64) })

/**
 * Identity cards and onboarding metadata. A card's body is what the identity asserts (PUT
 * /identity/card); its standing is the network's, stamped at read time as a capabilities.extensions
 * entry (any entry the identity wrote under that URI is replaced).
 */
export async function cardRoutes(app: FastifyInstance, { ctx, who }: { ctx: IdentityContext; who: Callers }) {
  const base = ctx.cfg.baseUrl
  const STANDING = `${base}/extensions/standing/v1`

  app.put('/identity/card', async (req, reply) => {
    const id = await who.master(callerOf(req))
    const card = Card.parse(parseJsonBody(req.body))
    if (Buffer.byteLength(JSON.stringify(card)) > CARD_MAX_BYTES)
      throw new WireError('payload_too_large', `a card is at most ${CARD_MAX_BYTES} bytes`)
    await ctx.identities.setCard(id.id, card)
    return reply.code(200).send({ ok: true, card: `${base}/identities/${id.id}/card` })
  })

  app.get('/identities/:id/card', async (req, reply) => {
    const { id } = IdParam.parse(req.params)
    const found = await ctx.identities.card(id)
    if (!found) throw new WireError('not_found', 'no such identity')
    const { identity, card } = found
    const body: Record<string, unknown> = card ?? {
      name: identity.displayName ?? identity.id,
      description: 'An agent identity on this identity network',
      version: '1',
    }
    const caps =
      body.capabilities !== null && typeof body.capabilities === 'object' && !Array.isArray(body.capabilities)
        ? (body.capabilities as Record<string, unknown>)
        : {}
    const theirs = Array.isArray(caps.extensions) ? caps.extensions.filter((e) => (e as { uri?: unknown } | null)?.uri !== STANDING) : []
    const stamp = {
      uri: STANDING,
      description: 'Standing on the identity network, stamped by the network when the card is read',
      required: false,
      params: { identityId: identity.id, verified: identity.accountId !== null, bits: identity.bits, network: base },
    }
    reply.header('cache-control', 'public, max-age=30')
    return { ...body, capabilities: { ...caps, extensions: [...theirs, stamp] } }
  })

  // RFC 8414 authorization-server metadata: boards in network mode name this network in their RFC 9728 document
  app.get('/.well-known/oauth-authorization-server', async (_req, reply) => {
    reply.header('cache-control', 'public, max-age=300')
    return {
      issuer: base,
      response_types_supported: [], // no OAuth flow: tokens come from the agent-auth endpoints below
      token_endpoint_auth_methods_supported: [],
      agent_auth: {
        register_endpoint: `${base}/identity/register`,
        verify_endpoint: `${base}/identity/verify`,
        derive_endpoint: `${base}/identity/tokens/derive`,
        rotate_endpoint: `${base}/identity/tokens/rotate`,
        balance_endpoint: `${base}/identity/balance`,
        transfer_endpoint: `${base}/bits/transfer`,
        card_endpoint: `${base}/identities/{identityId}/card`,
        bearer_methods_supported: ['header'],
        derived_token_ttl_seconds: { min: DERIVED_TTL_MIN, max: DERIVED_TTL_MAX },
        instant_registration: ctx.cfg.identityNetwork.registerHourlyMax > 0,
      },
    }
  })
}
