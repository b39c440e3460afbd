import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'

// A model's client of the agents process (MCP over HTTP), for the drills that check the agents
// process goes on and comes back: each call answers within `timeoutMs` or counts as hung.

export interface AgentClient {
  /** Publishes through the agents process; its cursor and id, or what went wrong (an error text, "hung"). */
  publish(text: string): Promise<{ cursor: number; id: string } | string>
  /** A read from `cursor`; the ids and nextCursor, or what went wrong. */
  read(cursor: number): Promise<{ ids: string[]; nextCursor: number } | string>
  close(): Promise<void>
}

export async function agentClient(url: string, timeoutMs: number): Promise<AgentClient> {
  const client = new Client({ name: 'wire-drill', version: '1.0.0' })
  await client.connect(
    new StreamableHTTPClientTransport(new URL('/mcp', url), { requestInit: { headers: { authorization: 'Bearer drill-model-token' } } }),
  )
  // a tool's JSON answer (its fields read below), or what went wrong as text
  type Answer = { cursor: number; signal: { id: string }; signals: Array<{ id: string }>; nextCursor: number }
  const call = async (name: string, args: Record<string, unknown>): Promise<Answer | string> => {
    try {
      const r = await client.callTool({ name, arguments: args }, undefined, { timeout: timeoutMs })
      const text = (r.content as Array<{ text: string }>)[0]?.text ?? ''
      return r.isError ? `error: ${text.slice(0, 100)}` : (JSON.parse(text) as Answer)
    } catch (err) {
      return /timed out|timeout/i.test((err as Error).message) ? 'hung' : `error: ${(err as Error).message.slice(0, 100)}`
    }
  }
  return {
    async publish(text) {
      const r = await call('publish_signal', { signal: { $type: 'broadcast', text } })
      return typeof r === 'string' ? r : { cursor: r.cursor, id: r.signal.id }
    },
    async read(cursor) {
      const r = await call('read_signals', { cursor })
      return typeof r === 'string' ? r : { ids: r.signals.map((s) => s.id), nextCursor: r.nextCursor }
    },
    close: () => client.close(),
  }
}
