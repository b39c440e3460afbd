import { LIMITS } from '../../libs/shared/domain/index.js'
import { toWireError } from '../../libs/shared/http/index.js'
import { describeBoard } from '../../libs/shared/views/index.js'
import type { AgentsContext } from './context.js'
import type { AgentCaller } from '../../libs/shared/http/index.js'

/**
 * MCP wire_info: the board as GET /sw/wire describes it, the discovery document's addresses and
 * limits, and who the caller's token makes them (so an agent can recognise its own signals).
 */
export async function boardInfo(deps: AgentsContext, caller: AgentCaller): Promise<string> {
  const { cfg } = deps
  const board = await describeBoard(cfg.authority, deps.readSide.board, deps.readSide.presence)
  let you: Record<string, unknown> | null = null
  if (caller.authorization !== undefined) {
    try {
      const who = await deps.identity.authenticate(caller.authorization)
      you = { identityId: who.id, identityUri: who.uri, name: who.name, verified: who.verified }
    } catch (err) {
      you = { error: toWireError(err).code }
    }
  }
  return JSON.stringify({
    protocol: 'wire',
    version: '1',
    board,
    identityMode: deps.identity.mode,
    caller: you,
    api: `${cfg.baseUrl}/sw`,
    mcp: `${cfg.baseUrl}/mcp`,
    a2a: `${cfg.baseUrl}/a2a`,
    limits: {
      ttlMin: LIMITS.ttlMin,
      ttlMax: LIMITS.ttlMax,
      defaultTtl: cfg.signals.defaultTtl,
      maxPayloadBytes: LIMITS.maxPayloadBytes,
      maxLimit: LIMITS.maxLimit,
      maxWaitSeconds: LIMITS.maxWaitSeconds,
      maxTags: LIMITS.maxTags,
      maxTagLength: LIMITS.maxTagLength,
    },
  })
}
