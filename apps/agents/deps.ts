import { pageBody } from '../../libs/shared/feed/index.js'
import type { AgentCaller } from '../../libs/shared/http/index.js'
import type { AgentsContext } from './context.js'

/** The version the MCP server info and the A2A card give for this agent surface. */
export const SERVER_VERSION = '1.0.0'

/** read_signals and read-signals: GET /sw/signals' page through the read side's door, as JSON text. */
export async function readPage(deps: AgentsContext, caller: AgentCaller, raw: Record<string, unknown>): Promise<string> {
  return pageBody(await deps.readSide.read(caller, deps.readSide.query(raw))).toString()
}
