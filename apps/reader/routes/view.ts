import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { WireError } from '../../../libs/shared/domain/index.js'
import type { ReaderContext } from '../context.js'
import { loadViewAssets, type Asset } from '../view-assets.js'

/**
 * The page may load only this origin's scripts and styles, talk only to this origin, and never be
 * framed; no inline script or style exists to allow.
 */
export const VIEW_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ')

function send(req: FastifyRequest, reply: FastifyReply, a: Asset) {
  reply
    .header('content-security-policy', VIEW_CSP)
    .header('x-content-type-options', 'nosniff')
    .header('x-frame-options', 'DENY')
    .header('referrer-policy', 'no-referrer')
    // revalidated on every load (a 304 costs a few bytes), so a new release never mixes with cached modules
    .header('cache-control', 'no-cache')
    .header('etag', a.etag)
  if (req.headers['if-none-match'] === a.etag) return reply.code(304).send()
  return reply.type(a.type).send(a.body)
}

/** GET /view (the live viewer page) and /view/<file> for the page's own files and the client library. */
export async function viewRoutes(app: FastifyInstance, { ctx }: { ctx: ReaderContext }) {
  const { files, missing } = loadViewAssets()
  if (missing.length) ctx.log.warn({ missing }, 'viewer files missing; /view may not work (run npm run build)')
  const page = files.get('index.html')
  // The page names its files relative to `/view` (`view/main.js`), so it works under any prefix (an
  // aggregator's `/sw/{authority}/view`); from `/view/` or `/view/index.html` those names would
  // miss, so the browser is sent to `/view` (a relative Location: the prefix is kept too).
  const toPage = (req: FastifyRequest, reply: FastifyReply) => {
    const q = req.url.indexOf('?')
    return reply
      .code(308)
      .header('location', `../view${q >= 0 ? req.url.slice(q) : ''}`)
      .send()
  }
  app.get('/view', async (req, reply) => {
    if (!page) throw new WireError('not_found', 'the viewer is not installed')
    if (req.url.split('?', 1)[0]!.endsWith('/')) return toPage(req, reply) // `/view/`: the router ignores a trailing slash
    return send(req, reply, page)
  })
  app.get<{ Params: { '*': string } }>('/view/*', async (req, reply) => {
    const name = req.params['*']
    if ((name === '' || name === 'index.html') && page) return toPage(req, reply)
    const a = files.get(name)
    if (!a) throw new WireError('not_found', 'no such viewer file')
    return send(req, reply, a)
  })
}
