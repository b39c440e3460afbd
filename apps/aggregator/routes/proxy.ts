import type { FastifyInstance, FastifyRequest } from 'fastify'
import { abortOnClose } from '../../../libs/shared/http/index.js'
import type { AggregatorContext } from '../context.js'
import { tokenSwap } from '../token-swap.js'

/**
 * `{aggregator}/sw/{authority}/…`: every path of a board, passed through (docs/aggregator.md "Proxy").
 * The board's answer streams back as it arrives, so a waiting long-poll costs a socket, not a buffer.
 */
export async function proxyRoutes(app: FastifyInstance, { ctx }: { ctx: AggregatorContext }) {
  // with an identity network, a board is sent a token derived for it, never the caller's master token (docs/aggregator.md "Proxy")
  const swap =
    ctx.cfg.identity.mode === 'network' ? tokenSwap({ identityUrl: ctx.cfg.identity.url, log: ctx.log.child({ mod: 'token-swap' }) }) : null
  const handler = async (req: FastifyRequest, reply: import('fastify').FastifyReply) => {
    const { authority } = req.params as { authority: string }
    let headers = req.headers
    if (swap && headers.authorization !== undefined) {
      const authorization = await swap.authorizationFor(headers.authorization, authority.toLowerCase(), req.method)
      headers = { ...headers, authorization }
    }
    const raw = req.url.slice('/sw/'.length) // the board's path and query exactly as the client wrote them
    const cut = raw.search(/[/?]/)
    const answer = await ctx.proxy.forward({
      method: req.method,
      authority,
      rest: cut < 0 ? '' : raw.slice(cut),
      headers,
      body: typeof req.body === 'string' ? req.body : undefined,
      clientAddress: req.ip,
      left: abortOnClose(reply),
    })
    return reply.code(answer.status).headers(answer.headers).send(answer.body)
  }
  for (const url of ['/sw/:authority', '/sw/:authority/*'])
    app.route({ method: ['GET', 'HEAD', 'POST', 'PATCH', 'PUT', 'DELETE'], url, handler })
}
