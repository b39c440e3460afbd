import type { McpAnswer } from '../../libs/shared/http/index.js'
import type { A2aSurface } from './a2a-surface.js'
import type { AgentsContext } from './context.js'

/**
 * The MCP and A2A sides that need their SDKs (and with them zod's v3 API, zod-to-json-schema, jose,
 * hono, node:http2: ~9 MB of a fresh single process's RSS, bench/results/fresh-process.md),
 * each loaded by the first request that needs it, once (that request takes ~50 ms longer for MCP,
 * ~25 ms for A2A): the single process serves agents beside the board, and a board may never see
 * one. Requests that arrive while it loads wait on the same load; a load that fails fails those
 * requests (a JSON-RPC internal error, logged) and the next request tries again.
 */
export interface AgentSurfaces {
  mcp(): Promise<McpAnswer>
  a2a(): Promise<A2aSurface>
}

export function agentSurfaces(deps: AgentsContext): AgentSurfaces {
  return {
    mcp: once(async () => (await import('./mcp-tools.js')).mcpSurface(deps)),
    a2a: once(async () => (await import('./a2a-surface.js')).a2aSurface(deps)),
  }
}

function once<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined
  return () =>
    (loading ??= load().catch((err: unknown) => {
      loading = undefined
      throw err
    }))
}
