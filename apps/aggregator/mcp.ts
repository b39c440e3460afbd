import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { errorBody, toWireError } from '../../libs/shared/http/index.js'
import type { AggregatorContext } from './context.js'
import { presentBoard } from './routes/registry.js'
import { parseSearchQuery } from './search/search.js'

const text = (v: unknown, isError = false) => ({
  content: [{ type: 'text' as const, text: JSON.stringify(v) }],
  ...(isError && { isError }),
})

/** A fresh stateless MCP server per request with `search_signals` and `list_boards`, calling what the HTTP routes call. */
function mcpServer(ctx: AggregatorContext, left: AbortSignal, address: string): McpServer {
  const server = new McpServer(
    { name: 'wire-aggregator', version: '1' },
    { instructions: 'Search signals across every Wire board registered with this aggregator, and list the boards.' },
  )
  const run = async (fn: () => Promise<unknown>) => {
    try {
      return text(await fn())
    } catch (err) {
      return text(errorBody(toWireError(err), true), true)
    }
  }
  server.registerTool(
    'search_signals',
    {
      description:
        'Same as GET /search/signals: {signals (each with its board), nextCursor, serverNow}. q is full text over payload text; keep nextCursor and pass it with wait (<= 25 s) to wait for new matches.',
      inputSchema: {
        q: z.string().max(256).optional(),
        tag: z.string().max(1024).optional(),
        type: z.string().max(200).optional(),
        origin: z.string().max(200).optional(),
        board: z.string().max(255).optional(),
        since: z.string().max(64).optional(),
        cursor: z.number().int().min(0).optional(),
        limit: z.number().int().min(1).max(100).optional(),
        wait: z.number().min(0).max(25).optional(),
      },
      annotations: { readOnlyHint: true },
    },
    (args) =>
      run(async () => {
        const raw = Object.fromEntries(
          Object.entries(args)
            .filter(([, v]) => v !== undefined)
            .map(([k, v]) => [k, String(v)]),
        )
        const q = parseSearchQuery(raw, Date.now())
        // a search that may wait holds one of its address's long-poll slots, as GET /search/signals?wait= does
        const release = q.cursor !== null && q.waitMs > 0 ? await ctx.limits.openPoll(address) : () => {}
        try {
          return { ...(await ctx.search.search(q, left)), serverNow: new Date().toISOString() }
        } finally {
          release()
        }
      }),
  )
  server.registerTool(
    'list_boards',
    {
      description: 'Same as GET /registry/boards: the registered boards with their status, features and proxy URL.',
      inputSchema: {
        name: z.string().max(200).optional(),
        feature: z.string().max(64).optional(),
        cursor: z.number().int().min(0).optional(),
        limit: z.number().int().min(1).max(100).optional(),
      },
      annotations: { readOnlyHint: true },
    },
    (args) =>
      run(async () => {
        const boards = await ctx.store.list({
          after: args.cursor ?? 0,
          limit: args.limit ?? 50,
          name: args.name ?? null,
          feature: args.feature ?? null,
        })
        return { boards: boards.map(presentBoard(ctx.cfg.baseUrl)), nextCursor: boards.at(-1)?.listSeq ?? args.cursor ?? 0 }
      }),
  )
  return server
}

/** POST /mcp (stateless Streamable HTTP, JSON answers). */
export async function aggregatorMcpRoutes(app: FastifyInstance, { ctx }: { ctx: AggregatorContext }) {
  app.post('/mcp', async (req, reply) => {
    let message: unknown
    try {
      message = JSON.parse(String(req.body))
    } catch {
      return reply.code(400).send({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: the body is not JSON' } })
    }
    if (Array.isArray(message))
      return reply.code(400).send({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'batches are not supported' } })
    const left = new AbortController()
    const server = mcpServer(ctx, left.signal, req.ip)
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true })
    reply.raw.once('close', () => {
      left.abort()
      void transport.close()
      void server.close()
    })
    await server.connect(transport)
    for (const [k, v] of Object.entries(reply.getHeaders())) if (v !== undefined) reply.raw.setHeader(k, v as string)
    reply.hijack()
    await transport.handleRequest(req.raw, reply.raw, message)
  })
}
