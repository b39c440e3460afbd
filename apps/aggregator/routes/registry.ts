import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { adminGuard } from '../../../libs/shared/auth/index.js'
import { WireError } from '../../../libs/shared/domain/index.js'
import { callerOf, parseJsonBody } from '../../../libs/shared/http/index.js'
import type { AggregatorContext } from '../context.js'
import { registrations } from '../metrics.js'
import { ListQuery } from './api.js'
import type { RegisteredBoard } from '../registry/store.js'

const Authority = z
  .string()
  .trim()
  .toLowerCase()
  .min(1)
  .max(255)
  .regex(/^[a-z0-9.:[\]-]+$/, 'not an authority')

/** A registered board as the registry shows it: where to reach it directly and through this aggregator. */
const presentBoard = (baseUrl: string) => (b: RegisteredBoard) => ({
  authority: b.authority,
  uri: `sw://${b.authority}`,
  url: b.url,
  proxy: `${baseUrl}/sw/${b.authority}`,
  name: b.name,
  description: b.description,
  features: b.features,
  limits: b.limits,
  status: b.status,
  registeredAt: b.registeredAt,
  checkedAt: b.checkedAt,
  lastOkAt: b.lastOkAt,
  indexed: { rows: b.indexRows, bytes: b.indexBytes },
  // set while the board is not followed: past its share of the index, or a page past AGGREGATOR_PAGE_MAX_BYTES
  overQuota: b.overQuotaAt ? { since: b.overQuotaAt, reason: b.overQuotaReason } : null,
})

/** GET /registry/boards' answer, and MCP list_boards': a page of boards, oldest registration first. */
export async function listBoards(ctx: AggregatorContext, q: ListQuery) {
  const boards = await ctx.store.list({
    after: q.cursor ?? 0,
    limit: q.limit,
    name: q.name ?? null,
    feature: q.feature ?? null,
    status: q.status ?? null,
  })
  const last = boards.at(-1)
  return { boards: boards.map(presentBoard(ctx.cfg.baseUrl)), nextCursor: last ? last.listSeq : (q.cursor ?? 0) }
}

/** POST/GET /registry/boards, GET/DELETE /registry/boards/{authority}, and blocking (admin). */
export async function registryRoutes(app: FastifyInstance, { ctx }: { ctx: AggregatorContext }) {
  const present = presentBoard(ctx.cfg.baseUrl)
  const admin = adminGuard(ctx.cfg.secrets.adminToken, ctx.limits)

  app.post('/registry/boards', async (req, reply) => {
    const { board, created } = await ctx.registry.register(callerOf(req), parseJsonBody(req.body)).catch((err: unknown) => {
      registrations.inc({ outcome: String((err as WireError).details?.reason ?? (err as WireError).code ?? 'error') })
      throw err
    })
    registrations.inc({ outcome: created ? 'registered' : 'refreshed' })
    ctx.proxy.forget(board.authority)
    void ctx.followers.sync()
    return reply.code(created ? 201 : 200).send({ board: present(board) })
  })

  app.get('/registry/boards', async (req) => listBoards(ctx, ListQuery.parse(req.query)))

  app.get('/registry/boards/:authority', async (req) => {
    const b = await ctx.store.get(Authority.parse((req.params as { authority: string }).authority))
    if (!b) throw new WireError('not_found', 'no such board is registered here')
    return { board: present(b) }
  })

  app.delete('/registry/boards/:authority', async (req, reply) => {
    await admin(req.headers.authorization, req.ip)
    const authority = Authority.parse((req.params as { authority: string }).authority)
    if (!(await ctx.store.remove(authority))) throw new WireError('not_found', 'no such board is registered here')
    ctx.proxy.forget(authority, true)
    void ctx.followers.sync()
    return reply.code(204).send()
  })

  app.post('/registry/blocked', async (req, reply) => {
    await admin(req.headers.authorization, req.ip)
    const authority = Authority.parse(parseJsonBody(req.body).authority)
    await ctx.store.block(authority)
    ctx.proxy.forget(authority, true)
    void ctx.followers.sync()
    return reply.code(201).send({ authority, blocked: true })
  })

  app.delete('/registry/blocked/:authority', async (req, reply) => {
    await admin(req.headers.authorization, req.ip)
    if (!(await ctx.store.unblock(Authority.parse((req.params as { authority: string }).authority))))
      throw new WireError('not_found', 'that authority is not blocked')
    return reply.code(204).send()
  })
}
