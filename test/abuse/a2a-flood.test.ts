import { randomUUID } from 'node:crypto'
import t from 'tap'
import { metrics } from '../../libs/shared/metrics/index.js'
import { post, startListening } from '../agents/listen.js'
import { until } from '../helpers/wait.js'

// Non-blocking A2A sends (0.3 `blocking: false`, 1.0 `returnImmediately`) cannot outlive their
// request: each answers when its work is done (the finished task), a read ends the moment its
// response closes, and the tasks kept are small and bounded however many are sent.

const legacy = (data: unknown) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id: randomUUID(),
    method: 'message/send',
    params: {
      configuration: { blocking: false },
      message: { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'data', data }] },
    },
  })
const v1 = (data: unknown) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id: randomUUID(),
    method: 'SendMessage',
    params: { configuration: { returnImmediately: true }, message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ data }] } },
  })
const taskBytes = async () => (await metrics.a2aTaskBytes.get()).values[0]?.value ?? 0

t.test('200 non-blocking reads: each waits inside its own request, none after it closed', async (t) => {
  const { s, url } = await startListening(t, { noRedis: true, env: { LONG_POLLS_PER_ADDRESS_MAX: '0', READ_RATE_LIMIT_MAX: '0' } })
  const head = (await s.read()).nextCursor
  const read = { cursor: head, wait: 25, tag: 'flood' }
  const sends = Array.from({ length: 200 }, (_, i) => {
    const abort = new AbortController()
    const body = i % 2 ? legacy(read) : v1(read)
    const headers = { 'content-type': 'application/json', ...(i % 2 ? {} : { 'a2a-version': '1.0' }) }
    const res = fetch(`${url}/a2a`, { method: 'POST', headers, body, signal: abort.signal }).then(
      async (r) => (await r.json()) as any,
      () => null,
    )
    return { abort, res }
  })
  await until(() => s.reader.readSide.feed.waiting === 200, 10_000, 'every read to wait inside its request')
  for (const x of sends.slice(0, 100)) x.abort.abort()
  await until(() => s.reader.readSide.feed.waiting === 100, 5000, 'the reads of closed requests to end')
  const sig = (await s.publish({ $type: 'broadcast', $tags: ['flood'], text: 'wake' })).json().signal
  const answers = await Promise.all(sends.slice(100).map((x) => x.res))
  await until(() => s.reader.readSide.feed.waiting === 0, 5000, 'no read left waiting')
  for (const a of answers) {
    const task = a.result.task ?? a.result
    const state = task.status.state
    t.ok(state === 'completed' || state === 'TASK_STATE_COMPLETED', 'answered with the finished task, not a working one')
  }
  const legacyAnswer = answers.find((a) => a.result.kind === 'task')
  t.equal(legacyAnswer.result.artifacts[0].parts[0].data.signals[0].id, sig.id, 'the answer carries the read')
  t.equal(await taskBytes(), 0, 'anonymous tasks are not kept once finished')
})

t.test('200 non-blocking publishes of up to 45 KiB: tasks keep no payload, memory stays bounded', async (t) => {
  const { s, url } = await startListening(t, {
    noRedis: true,
    env: { PUBLISH_RATE_LIMIT_MAX: '0', PUBLISH_ADDRESS_RATE_LIMIT_MAX: '0', NEW_IDENTITY_RATE_LIMIT_MAX: '0' },
  })
  const big = 'x'.repeat(15_000)
  const refusedOnly = 'y'.repeat(15_000)
  const auth = { authorization: 'Bearer a2a-flood-token', 'a2a-version': '1.0' }
  const states: Record<string, number> = {}
  for (let round = 0; round < 4; round++) {
    // half fit (15 KB payload), half are refused as too large (45 KB): a failed task kept its message before
    const batch = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        post(`${url}/a2a`, v1({ $type: 'broadcast', a: big, ...(i % 2 && { b: refusedOnly, c: refusedOnly }) }), auth),
      ),
    )
    for (const r of batch) states[r.json.result.task.status.state] = (states[r.json.result.task.status.state] ?? 0) + 1
  }
  t.same(states, { TASK_STATE_COMPLETED: 100, TASK_STATE_FAILED: 100 }, 'every send finished within its request')
  t.equal((await s.read('limit=100')).signals.length, 100, 'stored')
  const bytes = await taskBytes()
  // a completed publish keeps its answer (the signal, for tasks/get); a failed one only its error
  t.ok(bytes > 100 * 15_000 && bytes < 100 * 17_000 + 100 * 2000, `200 tasks kept in ${bytes} characters, not the 200 messages sent (6 MB)`)
  const many = await post(
    `${url}/a2a`,
    JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ListTasks', params: { pageSize: 100, includeArtifacts: true } }),
    auth,
  )
  t.notOk(JSON.stringify(many.json).includes(refusedOnly.slice(0, 100)), 'no refused payload is kept')
  const listed = await post(`${url}/a2a`, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ListTasks', params: { pageSize: 10 } }), auth)
  t.equal(listed.json.result.tasks.length, 10, 'the owner lists its tasks')
})
