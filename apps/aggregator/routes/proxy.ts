import type { FastifyInstance, FastifyRequest } from 'fastify'
import { abortOnClose } from '../../../libs/shared/http/index.js'
import type { AggregatorContext } from '../context.js'

/**
 * `{aggregator}/sw/{authority}/…`: every path of a board, passed through (docs/aggregator.md "Proxy").
 * The board's answer streams back as it arrives, so a waiting long-poll costs a socket, not a buffer.
 */
export async function proxyRoutes(app: FastifyInstance, { ctx }: { ctx: AggregatorContext }) {
  const handler = async (req: FastifyRequest, reply: import('fastify').FastifyReply) => {
    const { authority } = req.params as { authority: string }
    const raw = req.url.slice('/sw/'.length) // the board's path and query exactly as the client wrote them
    const cut = raw.search(/[/?]/)
    const answer = await ctx.proxy.forward({
      method: req.method,
      authority,
      rest: cut < 0 ? '' : raw.slice(cut),
      headers: req.headers,
      body: typeof req.body === 'string' ? req.body : undefined,
      clientAddress: req.ip,
      left: abortOnClose(reply),
    })
    return reply.code(answer.status).headers(answer.headers).send(answer.body)
  }
  for (const url of ['/sw/:authority', '/sw/:authority/*'])
    app.route({ method: ['GET', 'HEAD', 'POST', 'PATCH', 'PUT', 'DELETE'], url, handler })
}
