import t from 'tap'
import { mcpEndpointChecks, modern, toolJson } from '../helpers/mcp.js'
import { startListening } from './listen.js'

// MCP 2026-07-28 on the same /mcp as the 2025-11-25 handshake (mcp.test.ts): no initialize, no
// session; every request carries its protocol version and client capabilities in _meta and names
// its method (and tool) in headers. The checks every Wire /mcp passes are test/helpers/mcp.ts's
// (the aggregator's /mcp passes the same: test/aggregator/mcp-eras.test.ts).

t.test('MCP 2026-07-28 at /mcp, beside 2025-11-25', async (t) => {
  const { s, url } = await startListening(t)

  mcpEndpointChecks(t, url, {
    server: 'wire',
    tools: ['wire_info', 'read_signals', 'get_signal', 'read_thread', 'publish_signal', 'register_identity'],
  })

  t.test('tools/call publishes as the bearer and reads, per request', async (t) => {
    const pub = await modern(
      url,
      'tools/call',
      { name: 'publish_signal', arguments: { signal: { $type: 'broadcast', $tags: ['era'], text: 'from 2026' } } },
      { authorization: 'Bearer era-2026-token' },
    )
    t.equal(pub.status, 200)
    t.equal(pub.json.result.resultType, 'complete')
    const published = toolJson(pub)
    t.equal(published.ok, true)
    const http = (await s.app.inject({ url: `/sw/signals/${published.signal.id}` })).json()
    t.equal(http.signal.payload.text, 'from 2026')
    const read = toolJson(await modern(url, 'tools/call', { name: 'read_signals', arguments: { tag: 'era' } }))
    t.same(
      read.signals.map((x: { id: string }) => x.id),
      [published.signal.id],
    )
    const anonymous = await modern(url, 'tools/call', { name: 'publish_signal', arguments: { signal: { $type: 'broadcast', text: 'x' } } })
    t.equal(anonymous.json.result.isError, true)
    t.equal(toolJson(anonymous).error.code, 'unauthorized', 'a request without a token is anonymous, whatever came before')
  })
})
