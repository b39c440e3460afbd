import type { FastifyInstance } from 'fastify'
import { NewRule } from '../../../libs/shared/api/index.js'
import { WireError } from '../../../libs/shared/domain/index.js'
import { parseJsonBody } from '../../../libs/shared/http/index.js'
import type { WriterContext } from '../context.js'

const RULE_ID = /^[\x21-\x7e]{1,256}$/

/** /sw/admin/rules: list, add (201, or 200 with the existing rule), remove. Effective on every writer within 1 s. */
export async function adminRuleRoutes(app: FastifyInstance, { ctx }: { ctx: WriterContext }) {
  app.addHook('onRequest', (req) => ctx.checkAdmin(req.headers.authorization, req.ip))
  const changed = () => ctx.invalidate({ kind: 'rules' })
  app.get('/rules', async () => ({ rules: await ctx.board.rules() }))
  app.post('/rules', async (req, reply) => {
    const { ruleType, identityId } = NewRule.parse(parseJsonBody(req.body))
    const { rule, created } = await ctx.boardWrite.addRule(ruleType, identityId)
    if (created) await changed(), req.log.info({ rule: rule.id, ruleType }, 'rule added')
    return reply.code(created ? 201 : 200).send({ rule })
  })
  app.delete<{ Params: { id: string } }>('/rules/:id', async (req) => {
    // rule ids are printable ASCII (rl_…); anything else (a NUL would fail in PostgreSQL) names no rule
    const known = RULE_ID.test(req.params.id) && (await ctx.boardWrite.removeRule(req.params.id))
    if (!known) throw new WireError('not_found', 'no such rule')
    await changed()
    req.log.info({ rule: req.params.id }, 'rule removed')
    return { ok: true }
  })
}
