import type { FastifyInstance } from 'fastify'
import { LIMITS, type DiscoveryDocument } from '../../../libs/shared/domain/index.js'
import { resourceMetadataUrl } from '../../../libs/shared/http/index.js'
import type { ReaderContext } from '../context.js'

/** GET /.well-known/wire: the discovery document. `features` lists only what this server serves. */
export async function discoveryRoutes(app: FastifyInstance, { ctx, features }: { ctx: ReaderContext; features: string[] }) {
  app.get('/.well-known/wire', async (): Promise<DiscoveryDocument> => {
    const { cfg } = ctx
    const meta = await ctx.readSide.board.meta()
    const board = { authority: cfg.authority, uri: `sw://${cfg.authority}`, name: meta.name, description: meta.description }
    return {
      protocol: 'wire',
      version: '1',
      subwires: [board],
      subwire: board, // the reference server's single-board field: its clients read `subwire.name`
      api: `${cfg.baseUrl}/sw`,
      ...(features.includes('mcp') && { mcp: `${cfg.baseUrl}/mcp` }),
      ...(features.includes('a2a') && { a2a: `${cfg.baseUrl}/a2a` }),
      viewer: `${cfg.baseUrl}/view`, // ours: the live web viewer
      identity: cfg.identity.mode === 'network' ? cfg.identity.url : null,
      identityMode: cfg.identity.mode,
      features,
      limits: { ttlMin: LIMITS.ttlMin, ttlMax: LIMITS.ttlMax, maxPayloadBytes: LIMITS.maxPayloadBytes, maxLimit: LIMITS.maxLimit },
      // onboarding documents, named as the reference server names them
      authmd: `${cfg.baseUrl}/auth.md`,
      oauthProtectedResource: resourceMetadataUrl(cfg.baseUrl),
      openapi: `${cfg.baseUrl}/sw/openapi.json`,
      ...(cfg.aggregatorUrl && { aggregator: cfg.aggregatorUrl }),
    }
  })
}
