import type { FastifyInstance } from 'fastify'
import type { ReaderContext } from '../context.js'
import { authManifest } from './auth-md.js'

/**
 * Agent onboarding as the reference server offers it: GET /.well-known/oauth-protected-resource
 * (RFC 9728 protected resource metadata) and GET /auth.md (how to get and use a token here).
 * Both come from config alone, never from the request's Host header.
 */
export async function onboardingRoutes(app: FastifyInstance, { ctx }: { ctx: ReaderContext }) {
  const { cfg } = ctx
  app.get('/.well-known/oauth-protected-resource', async (_req, reply) => {
    reply.header('cache-control', 'public, max-age=300')
    return {
      // RFC 9728 §3.3: the resource whose well-known address this is. The document sits at the base
      // URL's root, so that is the base URL: the origin, as the reference server answers.
      resource: cfg.baseUrl,
      ...(cfg.identity.mode === 'network' && { authorization_servers: [cfg.identity.url] }),
      bearer_methods_supported: ['header'],
      resource_documentation: `${cfg.baseUrl}/auth.md`,
      resource_name: (await ctx.readSide.board.meta()).name,
      'x-subwire-identity-mode': cfg.identity.mode, // the reference server's extension field, same values as discovery's identityMode
    }
  })
  app.get('/auth.md', async (_req, reply) => {
    const meta = await ctx.readSide.board.meta()
    return reply.header('cache-control', 'public, max-age=300').type('text/markdown; charset=utf-8').send(authManifest(cfg, meta.name))
  })
}
