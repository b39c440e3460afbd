import type { Test } from 'tap'
import { freePort } from '../helpers/process.js'
import { startStack, type Stack, type StackOptions } from '../helpers/stack.js'

export { post } from '../helpers/mcp.js'

/**
 * The single-process board listening on a real port, with PUBLIC_WIRE_URL naming that port, so the
 * URLs it hands out (the A2A card's endpoint) are the ones the SDK clients must then call.
 */
export async function startListening(t: Test, o: StackOptions = {}): Promise<{ s: Stack; url: string }> {
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  const s = await startStack(t, { ...o, env: { PUBLIC_WIRE_URL: url, ...o.env } })
  await s.app.listen({ port, host: '127.0.0.1' })
  return { s, url }
}
