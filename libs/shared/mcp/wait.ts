/**
 * The longest wait a tool call holds (seconds), on the board's MCP and the aggregator's alike: below
 * the shortest common MCP client deadline (the OpenAI Agents SDK's and httpx's 5 s), so a wait ends
 * as an empty answer, never as a client timeout. Larger waits are clamped to it; the HTTP APIs and
 * A2A wait up to 25 s.
 */
export const MCP_MAX_WAIT = 4

/** A tool call's `wait` argument held to `max` seconds: a longer one is clamped, never refused (a number in any notation, 1e21 too). */
export const clampedWait = (wait: unknown, max = MCP_MAX_WAIT): unknown => (typeof wait === 'number' && wait > max ? max : wait)
