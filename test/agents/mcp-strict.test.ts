import t from 'tap'
import { post, startListening } from './listen.js'

// What strict MCP clients check on the real /mcp (the Inspector's --strict mode among them): every
// node of every tool's input schema carries a validation keyword, and the stateless server
// advertises no capability it cannot keep (no tools/list_changed notifications without a session).

const HEADERS = { accept: 'application/json, text/event-stream' }
const VALIDATION = ['type', 'enum', 'const', 'anyOf', 'oneOf', 'allOf', 'not', '$ref']

/** Every schema node below `node` (properties, items, additionalProperties, the *Of branches, …) with its JSON path. */
function* schemaNodes(node: unknown, path: string): Generator<[string, Record<string, unknown>]> {
  if (typeof node !== 'object' || node === null || Array.isArray(node)) return
  const n = node as Record<string, unknown>
  yield [path, n]
  for (const key of ['properties', 'patternProperties', '$defs', 'definitions'])
    for (const [k, v] of Object.entries((n[key] as Record<string, unknown> | undefined) ?? {})) yield* schemaNodes(v, `${path}.${key}.${k}`)
  for (const key of ['items', 'additionalProperties', 'propertyNames', 'not', 'contains'])
    if (n[key] !== undefined) yield* schemaNodes(n[key], `${path}.${key}`)
  for (const key of ['anyOf', 'oneOf', 'allOf', 'prefixItems'])
    for (const [i, v] of ((n[key] as unknown[] | undefined) ?? []).entries()) yield* schemaNodes(v, `${path}.${key}[${i}]`)
}

t.test('strict MCP clients find nothing to warn about', async (t) => {
  const { url } = await startListening(t)
  const rpc = async (id: number, method: string, params: unknown = {}) => {
    const r = await post(`${url}/mcp`, JSON.stringify({ jsonrpc: '2.0', id, method, params }), HEADERS)
    t.equal(r.status, 200, `${method} answers`)
    return r.json.result
  }

  t.test('initialize advertises tools without listChanged: a stateless server never sends the notification', async (t) => {
    const init = await rpc(1, 'initialize', {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 'strict-check', version: '1' },
    })
    t.ok(init.capabilities.tools, 'tools are offered')
    t.not(init.capabilities.tools.listChanged, true, 'no listChanged: true')
  })

  t.test('every node of every input schema carries a validation keyword', async (t) => {
    const { tools } = await rpc(2, 'tools/list')
    t.equal(tools.length, 6)
    let nodes = 0
    for (const tool of tools as Array<{ name: string; inputSchema: unknown; outputSchema?: unknown }>) {
      for (const [path, node] of schemaNodes(tool.inputSchema, `${tool.name}.inputSchema`)) {
        nodes++
        t.ok(
          VALIDATION.some((k) => k in node),
          `${path} has a validation keyword (${JSON.stringify(node).slice(0, 80)})`,
        )
      }
    }
    t.ok(nodes > 20, `${nodes} schema nodes checked`)
    const signal = (tools as Array<{ name: string; inputSchema: any }>).find((x) => x.name === 'publish_signal')!.inputSchema.properties
      .signal
    t.ok(signal.anyOf[0].additionalProperties, 'payload keys stay allowed')
    t.match(signal.anyOf[0].additionalProperties.description, /payload/)
  })
})
