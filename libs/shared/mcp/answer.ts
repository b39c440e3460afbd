import type { CallToolResult } from '@modelcontextprotocol/server'
import { type AgentCaller, errorBody, logFailure, toWireError } from '../http/index.js'

/**
 * Runs a tool: its JSON as text (and as structuredContent for a tool with an outputSchema), or a
 * tool error whose text is the HTTP error body (the protocol code), the failure logged as the
 * HTTP routes log theirs.
 */
export async function toolAnswer(
  caller: AgentCaller,
  tool: string,
  run: () => Promise<string>,
  structured = false,
): Promise<CallToolResult> {
  try {
    const text = await run()
    return { content: [{ type: 'text', text }], ...(structured && { structuredContent: JSON.parse(text) as Record<string, unknown> }) }
  } catch (err) {
    const e = toWireError(err)
    logFailure(caller.log, err, e, { tool })
    return { isError: true, content: [{ type: 'text', text: JSON.stringify(errorBody(e, true)) }] }
  }
}
