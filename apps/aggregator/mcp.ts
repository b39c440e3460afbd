import type { McpServer } from '@modelcontextprotocol/server'
import { z } from 'zod'
import type { AgentCaller, McpAnswer } from '../../libs/shared/http/index.js'
import { clampedWait, MCP_MAX_WAIT, mcpEndpoint, statelessServer, toolAnswer } from '../../libs/shared/mcp/index.js'
import type { AggregatorContext } from './context.js'
import { ListQuery, SearchArgs } from './routes/api.js'
import { listBoards } from './routes/registry.js'
import { searchAnswer } from './routes/search.js'
import { parseSearchQuery } from './search/search.js'

const INSTRUCTIONS = 'Search signals across every Wire board registered with this aggregator, and list the boards.'

/** The aggregator's MCP at /mcp: both protocol eras, on the board's plumbing (libs/shared/mcp, libs/shared/http mcpRoutes). */
export const aggregatorMcp = (ctx: AggregatorContext): McpAnswer => mcpEndpoint((caller) => aggregatorServer(ctx, caller))

/** GET /search/signals' arguments, with a tool call's wait: at most MCP_MAX_WAIT, as the board's read_signals. */
const SearchToolArgs = SearchArgs.extend({
  wait: z
    .number()
    .min(0)
    .optional()
    .describe(`seconds to wait for a match, at most ${MCP_MAX_WAIT} (below MCP clients' deadlines; larger values are clamped)`),
})

/** A fresh server for one request, with `search_signals` and `list_boards`: each calls what its HTTP route calls and answers its JSON. */
function aggregatorServer(ctx: AggregatorContext, caller: AgentCaller): McpServer {
  const server = statelessServer({ name: 'wire-aggregator', version: '1' }, INSTRUCTIONS)
  const tool = (name: string, run: () => Promise<unknown>) => toolAnswer(caller, name, async () => JSON.stringify(await run()))
  server.registerTool(
    'search_signals',
    {
      description: `Same as GET /search/signals: {signals (each with its board), nextCursor, serverNow}. q is full text over payload text; keep nextCursor and pass it with wait (at most ${MCP_MAX_WAIT} s) to wait for new matches; an empty answer after a wait means nothing new yet.`,
      inputSchema: SearchToolArgs,
      annotations: { readOnlyHint: true },
    },
    (args) =>
      tool('search_signals', async () => {
        const raw = Object.fromEntries(
          Object.entries(args)
            .filter(([, v]) => v !== undefined)
            .map(([k, v]) => [k, String(k === 'wait' ? clampedWait(v) : v)]),
        )
        const q = parseSearchQuery(raw, Date.now())
        // a search that may wait holds one of its address's long-poll slots, as GET /search/signals?wait= does (app.ts)
        const release = q.cursor !== null && q.waitMs > 0 ? await ctx.limits.openPoll(caller.address) : () => {}
        try {
          return await searchAnswer(ctx, q, caller.gone)
        } finally {
          release()
        }
      }),
  )
  server.registerTool(
    'list_boards',
    {
      description: 'Same as GET /registry/boards: the registered boards with their status, features and proxy URL.',
      inputSchema: ListQuery,
      annotations: { readOnlyHint: true },
    },
    (args) => tool('list_boards', () => listBoards(ctx, args)),
  )
  return server
}
