import t from 'tap'
import { startStack } from '../helpers/stack.js'
import { until } from '../helpers/wait.js'

// The logging rule: log ids, codes, counts, durations; never tokens, secrets or signal payloads.
// Everything below runs at LOG_LEVEL=trace, then every captured line is searched.

const ADMIN_TOKEN = 'admin-token-SECRET-7f3a9c'
const TOKENS = ['agent-token-SECRET-one-1b2c', 'agent-token-SECRET-two-4d5e']
const PAYLOAD_VALUES = [
  'payload-value-SECRET-text-91',
  'payload-value-SECRET-nested-92',
  'payload-value-SECRET-refused-93',
  'payload-value-SECRET-admin-94',
] as const

t.test('no log line carries a bearer token, the admin token or a payload value', async (t) => {
  const s = await startStack(t, { env: { SERVER_ADMIN_TOKEN: ADMIN_TOKEN, LOG_LEVEL: 'trace', PUBLISH_RATE_LIMIT_MAX: '3' } })
  const admin = { authorization: `Bearer ${ADMIN_TOKEN}` }
  const [one, two] = TOKENS as [string, string]

  // publishes: accepted, replies, refused at each stage
  const root = (
    await s.publish({ $type: 'broadcast', $tags: ['ops'], text: PAYLOAD_VALUES[0], nested: { deep: [PAYLOAD_VALUES[1]] } }, one)
  ).json().signal
  t.ok(root, 'published')
  await s.publish({ $type: 'reply', $refId: root.id, text: PAYLOAD_VALUES[0] }, two)
  await s.publish({ text: PAYLOAD_VALUES[2] }, one) // invalid_request
  await s.publish({ $type: 'x', $ttl: 1, text: PAYLOAD_VALUES[2] }, one)
  await s.publish({ $type: 'x', text: PAYLOAD_VALUES[2].repeat(1000) }, one) // payload_too_large
  await s.publish({ $type: 'reply', text: PAYLOAD_VALUES[2] }, one) // reply_requires_ref
  await s.publish({ $type: 'reply', $refId: PAYLOAD_VALUES[2], text: 'x' }, one)
  await s.publish({ $type: 'x', text: PAYLOAD_VALUES[2] }, 'short') // unauthorized
  await s.app.inject({
    method: 'POST',
    url: '/sw/signals',
    headers: { authorization: `Basic ${one}`, 'content-type': 'application/json' },
    payload: `{"$type":"x","t":"${PAYLOAD_VALUES[2]}"}`,
  })
  await s.app.inject({ method: 'POST', url: '/sw/signals', headers: { authorization: `Bearer ${one} ${two}` }, payload: { $type: 'x' } })
  await s.app.inject({
    method: 'POST',
    url: '/sw/signals',
    headers: { ...s.bearer(one), 'content-type': 'application/json' },
    payload: `{"$type":"x","t":"${PAYLOAD_VALUES[2]}"`,
  }) // malformed
  await s.app.inject({
    method: 'POST',
    url: '/sw/signals',
    headers: { ...s.bearer(one), 'content-type': 'text/plain' },
    payload: `{"$type":"x","t":"${PAYLOAD_VALUES[2]}"}`,
  })
  await s.app.inject({
    method: 'POST',
    url: '/sw/signals',
    headers: { ...s.bearer(one), 'content-type': 'application/json' },
    payload: `{"$type":"x","t":"${PAYLOAD_VALUES[2]}","__proto__":{}}`,
  })
  await s.app.inject({
    method: 'POST',
    url: '/sw/signals',
    headers: { ...s.bearer(one), 'content-type': 'application/json' },
    payload: JSON.stringify({ $type: 'x', t: PAYLOAD_VALUES[2].repeat(3000) }),
  }) // over 64 KiB
  for (let i = 0; i < 4; i++) await s.publish({ $type: 'broadcast', text: PAYLOAD_VALUES[2] }, two) // rate_limited

  // reads with tokens, and a search for payload text
  await s.app.inject({ url: `/sw/signals?q=${PAYLOAD_VALUES[0]}`, headers: s.bearer(one) })
  await s.app.inject({ url: `/sw/signals/${root.id}`, headers: s.bearer(two) })
  await s.app.inject({ url: '/sw/wire', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })
  await s.app.inject({ url: `/sw/signals?since=${PAYLOAD_VALUES[2]}` })

  // admin calls, good and bad
  await s.app.inject({ method: 'PATCH', url: '/sw/admin/wire', headers: admin, payload: { description: PAYLOAD_VALUES[3] } })
  await s.app.inject({ method: 'PATCH', url: '/sw/admin/wire', headers: admin, payload: { colour: PAYLOAD_VALUES[3] } })
  const rule = (
    await s.app.inject({ method: 'POST', url: '/sw/admin/rules', headers: admin, payload: { ruleType: 'deny', identityId: 'fp_someone' } })
  ).json().rule
  await s.app.inject({ method: 'DELETE', url: `/sw/admin/rules/${rule.id}`, headers: admin })
  await s.app.inject({ method: 'POST', url: `/sw/admin/signals/${root.id}/pin`, headers: admin })
  await s.app.inject({ method: 'DELETE', url: `/sw/admin/signals/${root.id}/pin`, headers: admin })
  await s.app.inject({ method: 'DELETE', url: `/sw/admin/signals/${root.id}`, headers: admin })
  await s.app.inject({ url: '/sw/admin/wire', headers: s.bearer(one) }) // a user token on admin
  await s.app.inject({ url: '/sw/admin/wire', headers: { authorization: `Bearer ${ADMIN_TOKEN}x` } })

  // failing requests of other kinds
  await s.app.inject({ url: `/sw/${PAYLOAD_VALUES[2]}`, headers: s.bearer(one) })
  await s.app.inject({ method: 'PUT', url: '/sw/signals', headers: s.bearer(one), payload: { t: PAYLOAD_VALUES[2] } })
  await s.app.inject({ url: '/sw/signals/%ZZ', headers: admin })

  // each request's line is written once its answer is sent (onResponse): a last request's line means every earlier one is in
  await s.app.inject({ url: '/healthz' })
  await until(() => s.logs.some((l) => l.includes('"url":"/healthz"')), 5000, "the last request's log line")
  const all = s.logs.join('')
  t.ok(s.logs.length > 20, `lines were captured (${s.logs.length})`)
  t.match(all, /signal published/, 'publishes are logged')
  t.match(all, /rule added/, 'admin changes are logged')
  for (const secret of [...TOKENS, ADMIN_TOKEN, ...PAYLOAD_VALUES]) {
    const lines = s.logs.filter((l) => l.includes(secret))
    t.same(lines, [], `no line contains ${secret}`)
  }
  t.notMatch(all, /SECRET/, 'nothing secret-looking at all')
})
