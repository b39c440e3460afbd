import t from 'tap'
import { answerChecker, everyOperationServed, type Json, pathItem } from '../helpers/openapi.js'
import { startStack } from '../helpers/stack.js'

// The OpenAPI document at /sw/openapi.json against the server itself: every route the board
// serves is in the document, every documented operation is served, and real answers of every
// operation (successes and errors) validate against the document's schemas.

t.test('the document and the server agree: routes, statuses and shapes', async (t) => {
  const served: Array<{ method: string; url: string }> = []
  const s = await startStack(t, {
    onRoute: (r) => {
      for (const method of [r.method].flat()) served.push({ method: method.toLowerCase(), url: r.url })
    },
  })
  const res = await s.app.inject({ url: '/sw/openapi.json' })
  t.equal(res.statusCode, 200)
  const doc = res.json() as Json
  t.equal(doc.openapi, '3.1.0')
  t.same(await s.app.inject({ url: '/sw/v1/openapi.json' }).then((r) => r.json()), doc, 'the same document under /sw/v1')

  t.test('every served route is documented, and every documented operation is served', async (t) => {
    t.ok(
      served.some((r) => r.url === '/') && served.some((r) => r.url === '/sw/signals'),
      `saw the routes as they were registered (${served.length})`,
    )
    const asDoc = (url: string) => url.replace(/:(\w+)/g, '{}').replace(/\*$/, '{}')
    const docPaths = Object.keys(doc.paths).map((p) => ({ p, shape: p.replace(/\{\w+\}/g, '{}') }))
    const undocumented = served
      .filter((r) => !['head', 'options'].includes(r.method) && r.url !== '*')
      .filter((r) => {
        const wildcard = r.url.endsWith('*')
        const candidates = docPaths.filter(({ shape }) => (wildcard ? shape.startsWith(asDoc(r.url)) : shape === asDoc(r.url)))
        return !candidates.some(({ p }) => pathItem(doc, p)?.[r.method])
      })
    t.same(undocumented, [], 'no served route is missing from the document')
    everyOperationServed(t, doc, s.app)
  })

  t.test('real answers of every operation validate against the document', async (t) => {
    const { check, exercisedAll } = answerChecker(t, doc, s.app)
    const bearer = { authorization: 'Bearer agent-one-token' }
    const admin = { authorization: 'Bearer admin-secret-token' }

    const first = (
      await check(
        'publish',
        { method: 'POST', url: '/sw/signals', headers: bearer, payload: { $type: 'broadcast', $tags: ['a'], text: 'hi' } },
        200,
      )
    ).json()
    const id = first.signal.id as string
    await check(
      'reply through /sw/v1',
      { method: 'POST', url: '/sw/v1/signals', headers: bearer, payload: { $type: 'reply', $refId: id, text: 're' } },
      200,
    )
    await check('publish without a token', { method: 'POST', url: '/sw/signals', payload: { $type: 'broadcast' } }, 401)
    await check('publish a reply without $refId', { method: 'POST', url: '/sw/signals', headers: bearer, payload: { $type: 'reply' } }, 400)
    await check(
      'publish too large',
      { method: 'POST', url: '/sw/signals', headers: bearer, payload: { $type: 'broadcast', text: 'x'.repeat(17_000) } },
      413,
    )
    const page = (await check('read the newest page', { url: '/sw/signals' }, 200)).json()
    await check('follow with nextCursor', { url: `/sw/signals?cursor=${page.nextCursor}&wait=0` }, 200)
    await check('a filtered read', { url: '/sw/signals?tag=a&q=hi&since=15m&limit=5&includeExpired=1' }, 200)
    const replies = (await check('direct replies (ref)', { url: `/sw/signals?ref=${id}` }, 200)).json()
    t.same(
      replies.signals.map((x: { refId: string }) => x.refId),
      [id],
      'ref: the one reply',
    )
    t.equal(typeof first.cursor, 'number', 'the publish answer carries its cursor')
    await check('a bad cursor', { url: '/sw/signals?cursor=x' }, 400)
    await check('by id', { url: `/sw/signals/${id}` }, 200)
    await check('by sw:// URI', { url: `/sw/signals/sw://${s.cfg.authority}/signals/${id}` }, 200)
    await check('an unknown id', { url: '/sw/signals/AbCdEfGhIjKlMnOpQrSt' }, 404)
    await check('thread', { url: `/sw/signals/${id}/thread` }, 200)
    await check('board', { url: '/sw/wire' }, 200)
    await check('tags', { url: '/sw/tags?q=a' }, 200)
    await check('stats', { url: '/sw/stats?bucketSeconds=60&buckets=6' }, 200)
    await check('the document', { url: '/sw/openapi.json' }, 200)
    await check('discovery', { url: '/.well-known/wire' }, 200)
    await check('protected resource', { url: '/.well-known/oauth-protected-resource' }, 200)
    await check('auth.md', { url: '/auth.md' }, 200)
    await check('agent card', { url: '/.well-known/agent-card.json' }, 200)
    await check('admin board', { url: '/sw/admin/wire', headers: admin }, 200)
    await check('admin board, wrong token', { url: '/sw/admin/wire', headers: bearer }, 401)
    await check('admin patch', { method: 'PATCH', url: '/sw/admin/wire', headers: admin, payload: { description: 'ours' } }, 200)
    const rule = (
      await check(
        'add a rule',
        { method: 'POST', url: '/sw/admin/rules', headers: admin, payload: { ruleType: 'deny', identityId: 'fp_00000000000000000000' } },
        201,
      )
    ).json()
    await check(
      'add it again',
      { method: 'POST', url: '/sw/admin/rules', headers: admin, payload: { ruleType: 'deny', identityId: 'fp_00000000000000000000' } },
      200,
    )
    await check('list rules', { url: '/sw/admin/rules', headers: admin }, 200)
    await check('remove the rule', { method: 'DELETE', url: `/sw/admin/rules/${rule.rule.id}`, headers: admin }, 200)
    await check('remove it again', { method: 'DELETE', url: `/sw/admin/rules/${rule.rule.id}`, headers: admin }, 404)
    await check('pin', { method: 'POST', url: `/sw/admin/signals/${id}/pin`, headers: admin }, 200)
    await check('unpin', { method: 'DELETE', url: `/sw/admin/signals/${id}/pin`, headers: admin }, 200)
    await check('remove', { method: 'DELETE', url: `/sw/admin/signals/${id}`, headers: admin }, 200)
    const rpc = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    }
    await check('MCP', { method: 'POST', url: '/mcp', headers: { accept: 'application/json, text/event-stream' }, payload: rpc }, 200)
    await check('MCP GET', { url: '/mcp' }, 405)
    await check('MCP DELETE', { method: 'DELETE', url: '/mcp' }, 405)
    await check(
      'A2A',
      { method: 'POST', url: '/a2a', payload: { jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { id: 'none' } } },
      200,
    )
    await check('liveness', { url: '/' }, 200)
    await check('healthz', { url: '/healthz' }, 200)
    await check('readyz', { url: '/readyz' }, 200)
    await check('metrics', { url: '/metrics' }, 200)
    await check('viewer page', { url: '/view' }, 200)
    await check('viewer file', { url: '/view/main.js' }, 200)
    await check('not a viewer file', { url: '/view/nope.js' }, 404)

    exercisedAll()
  })
})
