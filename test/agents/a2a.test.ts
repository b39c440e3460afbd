import { randomUUID } from 'node:crypto'
import { SendMessageRequest, TaskState, type Message, type Task } from '@a2a-js/sdk'
import { ClientFactory } from '@a2a-js/sdk/client'
import { LegacyJsonRpcTransport, isLegacyAgentCard, parseLegacyAgentCard } from '@a2a-js/sdk/compat/v0_3/client'
import t from 'tap'
import { until } from '../helpers/wait.js'
import { post, startListening } from './listen.js'

const TOKEN = 'a2a-agent-token'
const auth = (token = TOKEN) => ({ serviceParameters: { authorization: `Bearer ${token}` } })
const send = (data: unknown) => SendMessageRequest.fromJSON({ message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ data }] } })

/** A finished task's result: the artifact's data, or the error its status message carries. */
function outcome(r: Message | Task) {
  if (!('status' in r)) throw new Error('expected a task, got a message')
  const artifact = r.artifacts[0]?.parts[0]?.content
  const failure = r.status?.message?.parts.find((p) => p.content?.$case === 'data')?.content
  return {
    state: r.status?.state,
    data: artifact?.$case === 'data' ? artifact.value : undefined,
    error: failure?.$case === 'data' ? failure.value.error : undefined,
  }
}

/** The JSON-RPC 0.3 request of docs/agents.md's curl example. */
const legacySend = (data: unknown, id: number | string = 1) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'message/send',
    params: { message: { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'data', data }] } },
  })

t.test('A2A at /a2a', async (t) => {
  const { s, url } = await startListening(t)
  const client = await new ClientFactory().createFromUrl(url)

  t.test('the agent card (1.0) names the /a2a endpoint, both skills and the bearer scheme', async (t) => {
    const card = await client.getAgentCard()
    t.match(card, { name: String, description: String, version: String })
    t.same(
      card.skills.map((x) => x.id),
      ['read-signals', 'publish-signal'],
    )
    t.same(
      card.supportedInterfaces.map((i) => [i.url, i.protocolBinding, i.protocolVersion]),
      [
        [`${url}/a2a`, 'JSONRPC', '1.0'],
        [`${url}/a2a`, 'JSONRPC', '0.3'],
      ],
    )
    const bearer = card.securitySchemes.bearer?.scheme
    t.equal(bearer?.$case === 'httpAuthSecurityScheme' && bearer.value.scheme, 'Bearer')
    t.equal(client.protocolVersion, '1.0', 'the SDK client picked the 1.0 interface')
  })

  t.test('a client without A2A-Version gets the 0.3 card; URLs come from config, not the Host header', async (t) => {
    const r = await fetch(`${url}/.well-known/agent-card.json`, { headers: { host: 'evil.example' } })
    t.equal(r.status, 200)
    t.match(r.headers.get('vary'), /A2A-Version/i)
    const card: any = await r.json()
    t.match(card, { url: `${url}/a2a`, preferredTransport: 'JSONRPC', protocolVersion: '0.3.0' })
    t.same(card.securitySchemes.bearer, { type: 'http', scheme: 'bearer', description: card.securitySchemes.bearer.description })
    t.same(card.skills[1].security, [{ bearer: [] }])
    const { supportedInterfaces, ...legacyOnly } = card
    t.ok(isLegacyAgentCard(legacyOnly), 'the SDK recognises a 0.3 card')
    t.same(
      parseLegacyAgentCard(legacyOnly).supportedInterfaces.map((i) => i.url),
      [`${url}/a2a`],
    )
    t.equal(supportedInterfaces.length, 2)
  })

  t.test('message/send (1.0) publishes a signal; it is on the HTTP feed; tasks/get answers for its owner only', async (t) => {
    const task = (await client.sendMessage(send({ text: 'hello from a2a', $type: 'broadcast', $tags: ['A2A'] }), auth())) as Task
    const out = outcome(task)
    t.equal(out.state, TaskState.TASK_STATE_COMPLETED)
    t.equal(out.data.ok, true)
    const id = out.data.signal.id
    const http = await s.app.inject({ url: `/sw/signals/${id}` })
    t.match(http.body, '"payload":{"text":"hello from a2a","$type":"broadcast","$tags":["a2a"]}')
    t.same(http.json().signal, out.data.signal)
    const again = await client.getTask({ tenant: '', id: task.id, historyLength: undefined }, auth())
    t.equal(again.status?.state, TaskState.TASK_STATE_COMPLETED)
    t.same(outcome(again).data, out.data)
    await t.rejects(client.getTask({ tenant: '', id: task.id, historyLength: undefined }, auth('someone-else-token')), /not found/i)
  })

  t.test('read-signals long-polls: a publish wakes a waiting message/send', async (t) => {
    const head = (await s.read()).nextCursor
    const t0 = Date.now()
    const waiting = client.sendMessage(send({ cursor: head, wait: 5, tag: 'wake' }))
    await until(() => s.reader.readSide.feed.waiting === 1, 5000, 'the read to wait')
    await s.publish({ $type: 'broadcast', $tags: ['other'], text: 'noise' })
    await s.publish({ $type: 'broadcast', $tags: ['wake'], text: 'wake up' })
    const out = outcome(await waiting)
    t.equal(out.state, TaskState.TASK_STATE_COMPLETED)
    t.same(
      out.data.signals.map((x: any) => x.payload.text),
      ['wake up'],
    )
    t.equal(out.data.nextCursor, head + 2)
    t.ok(Date.now() - t0 < 2500, `answered in ${Date.now() - t0} ms`)
    const all = outcome(await client.sendMessage(send({ tag: ['a2a', 'wake'], limit: 10, fields: 'full' }))).data
    const viaHttp = await s.read('tag=a2a,wake&limit=10')
    t.same(all.signals, viaHttp.signals, 'fields "full": the same page as GET /sw/signals')
    const compact = outcome(await client.sendMessage(send({ tag: ['a2a', 'wake'], limit: 10 }))).data
    t.same(
      compact.signals.map((x: any) => x.id),
      viaHttp.signals.map((x: any) => x.id),
      'the compact default: the same signals',
    )
    t.notOk('uri' in compact.signals[0] || '$type' in compact.signals[0].payload, 'without what they restate')
  })

  t.test('a refused skill fails the task with the protocol error code', async (t) => {
    const noToken = outcome(await client.sendMessage(send({ $type: 'broadcast', text: 'x' })))
    t.equal(noToken.state, TaskState.TASK_STATE_FAILED)
    t.equal(noToken.error.code, 'unauthorized')
    const reply = outcome(await client.sendMessage(send({ $type: 'reply', text: 'x' }), auth()))
    t.equal(reply.error.code, 'reply_requires_ref')
    const typo = outcome(await client.sendMessage(send({ text: 'no $type', cursr: 1 })))
    t.equal(typo.error.code, 'invalid_request')
    t.match(typo.error.message, /Unrecognized key/)
    const textOnly = SendMessageRequest.fromJSON({ message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'hi' }] } })
    t.equal(outcome(await client.sendMessage(textOnly)).error.code, 'invalid_request')
    t.notOk(s.logs.join('').includes(TOKEN), 'bearer tokens are not logged')
    t.notOk(s.logs.join('').includes('no $type'), 'nor are payloads')
  })

  t.test('the SDK 0.3 client publishes and reads through message/send and tasks/get', async (t) => {
    const legacy = new LegacyJsonRpcTransport({ endpoint: `${url}/a2a` })
    const task = (await legacy.sendMessage(send({ $type: 'offer', text: 'from 0.3' }), auth())) as Task
    const out = outcome(task)
    t.equal(out.state, TaskState.TASK_STATE_COMPLETED)
    t.equal(out.data.signal.payload.text, 'from 0.3')
    t.equal(outcome(await legacy.getTask({ tenant: '', id: task.id, historyLength: undefined }, auth())).data.signal.id, out.data.signal.id)
    const raw = await post(`${url}/a2a`, legacySend({ type: 'offer', limit: 1 }, 'r1'))
    t.equal(raw.status, 200)
    t.match(raw.json, { jsonrpc: '2.0', id: 'r1', result: { kind: 'task', status: { state: 'completed' } } })
    t.equal(raw.json.result.artifacts[0].parts[0].data.signals[0].id, out.data.signal.id)
  })

  t.test('malformed or unsupported requests get JSON-RPC errors, never a 5xx', async (t) => {
    const notJson = await post(`${url}/a2a`, '{"jsonrpc":')
    t.equal(notJson.status, 200)
    t.equal(notJson.json.error.code, -32700)
    const unknown = await post(`${url}/a2a`, JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tasks/explode', params: {} }))
    t.match(unknown.json, { id: 7, error: { code: -32601 } })
    const unknownV1 = await post(`${url}/a2a`, JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'Explode', params: {} }), {
      'a2a-version': '1.0',
    })
    t.match(unknownV1.json, { id: 8, error: { code: -32601 } })
    const noMessage = await post(`${url}/a2a`, JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'message/send', params: {} }))
    t.equal(noMessage.json.id, 9)
    t.ok(noMessage.json.error.code <= -32600 && noMessage.json.error.code >= -32699, `invalid params: ${noMessage.text}`)
    const stream = await post(`${url}/a2a`, legacySend({}).replace('message/send', 'message/stream'))
    t.ok(stream.json.error, 'no streaming')
    const streamV1 = await post(
      `${url}/a2a`,
      JSON.stringify({
        jsonrpc: '2.0',
        id: 3,
        method: 'SendStreamingMessage',
        params: { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ data: {} }] } },
      }),
      { 'a2a-version': '1.0' },
    )
    t.match(streamV1.json, { id: 3, error: { message: /stream/i } })
    const badVersion = await post(`${url}/a2a`, legacySend({}), { 'a2a-version': '9.0' })
    t.ok(badVersion.json.error, 'an unsupported A2A-Version is refused')
    const missingTask = await post(`${url}/a2a`, JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'tasks/get', params: { id: 'nope' } }))
    t.match(missingTask.json, { id: 4, error: { code: -32001 } })
    const xml = await post(`${url}/a2a`, '<x/>', { 'content-type': 'application/xml' })
    t.equal(xml.json.jsonrpc, '2.0')
    for (const r of [notJson, unknown, unknownV1, noMessage, stream, streamV1, badVersion, missingTask, xml])
      t.ok(r.status < 500, `status ${r.status}`)
    const errors = s.logs.flatMap((l) => l.split('\n')).filter((l) => l && JSON.parse(l).level >= 50)
    t.same(errors, [], 'nothing was logged at error level')
  })
})
