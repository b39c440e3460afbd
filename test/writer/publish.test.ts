import { createHash } from 'node:crypto'
import t from 'tap'
import { fingerprint } from '../../libs/shared/auth/index.js'
import { startFakeIdentity } from '../helpers/fake-identity.js'
import { TEST_DATABASE_URL } from '../helpers/services.js'
import { startStack, type Stack } from '../helpers/stack.js'

// POST /sw/signals over HTTP: the emitted signal, every publish error, the check order of
// docs/protocol.md, references, board rules, rate limits and the unverified tier of local mode.

const ADMIN = { authorization: 'Bearer admin-secret-token' }
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
const EMITTED_FIELDS = [
  'id',
  'uri',
  'origin',
  'originName',
  'originUri',
  'originVerified',
  'type',
  'tags',
  'payload',
  'ttl',
  'boostBits',
  'pinned',
  'refId',
  'refUri',
  'createdAt',
  'expiresAt',
]

/** POST /sw/signals with a raw body (text sent as is) and JSON content type. */
const post = (s: Stack, body: string | Buffer, headers: Record<string, string> = {}) =>
  s.app.inject({ method: 'POST', url: '/sw/signals', headers: { 'content-type': 'application/json', ...headers }, payload: body })

const errorOf = (res: { statusCode: number; json: () => any }) => ({ status: res.statusCode, code: res.json()?.error?.code })

const defaultFingerprintKey = createHash('sha256').update(`wire-fp:${TEST_DATABASE_URL}`).digest('hex')

t.test('a successful publish', async (t) => {
  const s = await startStack(t, {
    env: { PUBLIC_WIRE_HOST: 'Board.Example.org:8443', PUBLIC_WIRE_URL: 'https://api.example.net/wire/', PUBLISH_RATE_LIMIT_MAX: '100000' },
  })
  const authority = 'board.example.org:8443'

  t.test('discovery links PUBLIC_WIRE_URL and names the authority', async (t) => {
    const d = (await s.app.inject({ url: '/.well-known/wire' })).json()
    t.equal(d.api, 'https://api.example.net/wire/sw')
    if ('mcp' in d) t.equal(d.mcp, 'https://api.example.net/wire/mcp')
    t.match(d.subwires, [{ authority, uri: `sw://${authority}` }])
  })

  t.test('answers 200 {ok:true, signal, cursor} with every field of the emitted signal', async (t) => {
    const before = Date.now()
    const res = await s.publish({ $type: 'broadcast', $tags: ['Hello'], text: 'hi' }, 'agent-one-token')
    const after = Date.now()
    t.equal(res.statusCode, 200)
    t.match(res.headers['content-type'], /^application\/json/)
    const body = res.json()
    t.same(Object.keys(body), ['ok', 'signal', 'cursor'], 'cursor: a Wire extension, the feed position of the signal')
    t.ok(Number.isSafeInteger(body.cursor) && body.cursor > 0)
    t.equal(body.ok, true)
    const sig = body.signal
    t.same(Object.keys(sig).sort(), [...EMITTED_FIELDS].sort(), 'exactly the fields of the spec table')
    t.match(sig.id, /^[0-9A-Za-z]{20}$/)
    t.equal(sig.uri, `sw://${authority}/signals/${sig.id}`)
    t.equal(sig.origin, fingerprint(defaultFingerprintKey, 'agent-one-token'), 'fp_ + HMAC-SHA256 with the default key')
    t.match(sig.origin, /^fp_[0-9a-f]{20}$/)
    t.equal(sig.originName, null)
    t.equal(sig.originUri, `sw://${authority}/identities/${sig.origin}`)
    t.equal(sig.originVerified, true)
    t.equal(sig.type, 'broadcast')
    t.same(sig.tags, ['hello'])
    t.same(sig.payload, { $type: 'broadcast', $tags: ['hello'], text: 'hi' })
    t.equal(sig.ttl, 43200)
    t.equal(sig.boostBits, 0)
    t.equal(sig.pinned, false)
    t.equal(sig.refId, null)
    t.equal(sig.refUri, null)
    t.match(sig.createdAt, ISO_MS, 'ISO 8601 UTC with milliseconds')
    t.match(sig.expiresAt, ISO_MS)
    const created = Date.parse(sig.createdAt)
    t.ok(created >= before && created <= after, 'createdAt is the server clock at acceptance')
    t.equal(Date.parse(sig.expiresAt) - created, 43200 * 1000, 'expiresAt = createdAt + ttl exactly')
  })

  t.test('expiresAt is createdAt + $ttl exactly, also when read back', async (t) => {
    for (const ttl of [10, 61, 86400]) {
      const sig = (await s.publish({ $type: 'broadcast', $ttl: ttl })).json().signal
      t.equal(sig.ttl, ttl)
      t.equal(Date.parse(sig.expiresAt) - Date.parse(sig.createdAt), ttl * 1000)
      const back = (await s.app.inject({ url: `/sw/signals/${sig.id}` })).json().signal
      t.equal(back.createdAt, sig.createdAt)
      t.equal(back.expiresAt, sig.expiresAt)
    }
  })

  t.test('the payload is served verbatim: key order, unknown keys, numbers as sent', async (t) => {
    const body = '{"b":1,"2":"two","$ttl":60,"$type":" offer ","a":{"z":1.50,"y":[1,2]},"$tags":["X"," y "],"n":12345678901234567890}'
    const expected = '"payload":{"b":1,"2":"two","$type":"offer","a":{"z":1.50,"y":[1,2]},"$tags":["x","y"],"n":12345678901234567890}'
    const res = await post(s, body, s.bearer())
    t.equal(res.statusCode, 200)
    t.ok(res.body.includes(expected), 'publish response')
    const id = res.json().signal.id
    t.ok((await s.app.inject({ url: `/sw/signals/${id}` })).body.includes(expected), 'by id')
    t.ok((await s.app.inject({ url: '/sw/signals?type=offer' })).body.includes(expected), 'in the feed')
  })

  t.test('uris use the configured authority, whatever Host the request names', async (t) => {
    const res = await s.app.inject({
      method: 'POST',
      url: '/sw/signals',
      headers: { ...s.bearer(), host: 'evil.example', 'x-forwarded-host': 'evil.example', forwarded: 'host=evil.example' },
      payload: { $type: 'broadcast' },
    })
    const sig = res.json().signal
    t.equal(sig.uri, `sw://${authority}/signals/${sig.id}`)
    t.equal(sig.originUri, `sw://${authority}/identities/${sig.origin}`)
    const back = await s.app.inject({ url: `/sw/signals/${sig.id}`, headers: { host: 'evil.example' } })
    t.equal(back.json().signal.uri, sig.uri)
    t.notOk(back.body.includes('evil'), 'nothing in a read names the forged host')
  })

  t.test('the same token is the same origin; another token another origin', async (t) => {
    const a1 = (await s.publish({ $type: 'broadcast' }, 'token-aaaaaaaa')).json().signal.origin
    const a2 = (await s.publish({ $type: 'broadcast' }, 'token-aaaaaaaa')).json().signal.origin
    const b = (await s.publish({ $type: 'broadcast' }, 'token-bbbbbbbb')).json().signal.origin
    t.equal(a1, a2)
    t.not(a1, b)
    const trimmed = await s.app.inject({
      method: 'POST',
      url: '/sw/signals',
      headers: { authorization: 'Bearer   token-aaaaaaaa  ' },
      payload: { $type: 'broadcast' },
    })
    t.equal(trimmed.json().signal.origin, a1, 'the token is trimmed')
    const scheme = await s.app.inject({
      method: 'POST',
      url: '/sw/signals',
      headers: { authorization: 'bearer token-aaaaaaaa' },
      payload: { $type: 'broadcast' },
    })
    t.equal(scheme.json().signal.origin, a1, 'the scheme is case-insensitive')
  })

  t.test('a token of exactly 8 characters is accepted', async (t) => {
    t.equal((await s.publish({ $type: 'broadcast' }, '12345678')).statusCode, 200)
  })

  t.test('/sw/v1/signals publishes the same way', async (t) => {
    const res = await s.app.inject({ method: 'POST', url: '/sw/v1/signals', headers: s.bearer(), payload: { $type: 'broadcast', v: 1 } })
    t.equal(res.statusCode, 200)
    t.match(res.json(), { ok: true, signal: { type: 'broadcast', payload: { v: 1 } } })
  })

  t.test('$refId', async (t) => {
    const root = (await s.publish({ $type: 'request', text: 'root' })).json().signal

    t.test('as a raw id makes a reply with refId and refUri', async (t) => {
      const res = await s.publish({ $type: 'reply', $refId: root.id, text: 'r' })
      t.equal(res.statusCode, 200)
      const sig = res.json().signal
      t.equal(sig.refId, root.id)
      t.equal(sig.refUri, `sw://${authority}/signals/${root.id}`)
      t.notOk('$refId' in sig.payload, '$refId is not in the payload')
    })
    t.test('as a sw:// URI of this board resolves to the raw id', async (t) => {
      for (const ref of [`sw://${authority}/signals/${root.id}`, `sw://BOARD.example.ORG:8443/signals/${root.id}`, `  ${root.id}  `]) {
        const res = await s.publish({ $type: 'reply', $refId: ref })
        t.equal(res.statusCode, 200, ref)
        t.equal(res.json().signal.refId, root.id)
      }
    })
    t.test('on a non-reply type still makes a reply in the thread', async (t) => {
      const sig = (await s.publish({ $type: 'offer', $refId: root.id })).json().signal
      t.equal(sig.refId, root.id)
      const thread = (await s.app.inject({ url: `/sw/signals/${root.id}/thread` })).json().signals
      t.ok(thread.some((x: { id: string }) => x.id === sig.id))
    })
    t.test('naming another board is invalid_request', async (t) => {
      for (const ref of [
        `sw://other.example/signals/${root.id}`,
        `sw://board.example.org:9999/signals/${root.id}`,
        `sw://board.example.org/signals/${root.id}`,
      ]) {
        const res = await s.publish({ $type: 'reply', $refId: ref })
        t.same(errorOf(res), { status: 400, code: 'invalid_request' }, ref)
      }
    })
    t.test('naming no signal is invalid_request', async (t) => {
      const res = await s.publish({ $type: 'reply', $refId: 'AAAAAAAAAAAAAAAAAAAA' })
      t.same(errorOf(res), { status: 400, code: 'invalid_request' })
      t.match(res.json().error.details, { refId: 'AAAAAAAAAAAAAAAAAAAA' })
      const uri = await s.publish({ $type: 'reply', $refId: `sw://${authority}/signals/AAAAAAAAAAAAAAAAAAAA` })
      t.same(errorOf(uri), { status: 400, code: 'invalid_request' })
    })
    t.test('that is not an id or URI is invalid_request', async (t) => {
      for (const ref of [
        'hello',
        root.id.slice(1),
        `${root.id}x`,
        `https://${authority}/signals/${root.id}`,
        `sw://${authority}/identities/${root.id}`,
      ])
        t.same(errorOf(await s.publish({ $type: 'reply', $refId: ref })), { status: 400, code: 'invalid_request' }, ref)
    })
    t.test('to an expired signal that is not swept yet is accepted', async (t) => {
      const old = (await s.publish({ $type: 'broadcast', $ttl: 10 })).json().signal
      await s.infra.primary.query(`update "${s.schema}".signals set expires_at = now() - interval '1 minute' where id = $1`, [old.id])
      const res = await s.publish({ $type: 'reply', $refId: old.id })
      t.equal(res.statusCode, 200)
    })
    t.test('to a removed signal is invalid_request', async (t) => {
      const gone = (await s.publish({ $type: 'broadcast' })).json().signal
      t.equal((await s.app.inject({ method: 'DELETE', url: `/sw/admin/signals/${gone.id}`, headers: ADMIN })).statusCode, 200)
      t.same(errorOf(await s.publish({ $type: 'reply', $refId: gone.id })), { status: 400, code: 'invalid_request' })
    })
  })

  t.test('errors', async (t) => {
    t.test('every error body is {error:{code, message}}', async (t) => {
      const res = await s.publish({ text: 'no type' })
      t.equal(res.statusCode, 400)
      t.match(res.headers['content-type'], /^application\/json/)
      const body = res.json()
      t.same(Object.keys(body), ['error'])
      t.equal(body.error.code, 'invalid_request')
      t.type(body.error.message, 'string')
    })
    t.test('a signal without $type, not an object, or missing is invalid_request 400', async (t) => {
      for (const body of ['{"text":"x"}', '[]', '"x"', 'null', '{"$type":', '', '   '])
        t.same(errorOf(await post(s, body, s.bearer())), { status: 400, code: 'invalid_request' }, JSON.stringify(body))
    })
    t.test('$ttl outside 10..86400 is invalid_request 400', async (t) => {
      for (const ttl of [9, 86401, 1.5, '60'])
        t.same(errorOf(await s.publish({ $type: 'broadcast', $ttl: ttl })), { status: 400, code: 'invalid_request' }, String(ttl))
    })
    t.test('bad tags are invalid_request 400 naming the limit', async (t) => {
      const many = await s.publish({ $type: 'broadcast', $tags: Array.from({ length: 17 }, (_, i) => `t${i}`) })
      t.same(errorOf(many), { status: 400, code: 'invalid_request' })
      t.match(many.json().error, { message: /16/, details: { maxTags: 16 } })
      const long = await s.publish({ $type: 'broadcast', $tags: ['x'.repeat(65)] })
      t.same(errorOf(long), { status: 400, code: 'invalid_request' })
      t.match(long.json().error, { message: /64/, details: { maxTagLength: 64 } })
      t.same(errorOf(await s.publish({ $type: 'broadcast', $tags: [7] })), { status: 400, code: 'invalid_request' })
    })
    t.test('a payload over 16384 bytes is payload_too_large 413 with details', async (t) => {
      const res = await s.publish({ $type: 'broadcast', text: 'é'.repeat(9000) })
      t.same(errorOf(res), { status: 413, code: 'payload_too_large' })
      t.match(res.json().error.details, {
        maxPayloadBytes: 16384,
        payloadBytes: 18000 + Buffer.byteLength('{"$type":"broadcast","text":"","$tags":[]}'),
      })
    })
    t.test('a reply without $refId is reply_requires_ref 400', async (t) => {
      t.same(errorOf(await s.publish({ $type: 'reply', text: 'orphan' })), { status: 400, code: 'reply_requires_ref' })
      t.same(errorOf(await s.publish({ $type: 'reply', $refId: '' })), { status: 400, code: 'reply_requires_ref' })
    })
    t.test('a missing or invalid token is unauthorized 401', async (t) => {
      const noAuth = await s.app.inject({ method: 'POST', url: '/sw/signals', payload: { $type: 'broadcast' } })
      t.same(errorOf(noAuth), { status: 401, code: 'unauthorized' })
      for (const authorization of [
        'Bearer 1234567',
        'Bearer',
        'Bearer ',
        'Basic YWxhZGRpbjpvcGVuc2VzYW1l',
        'Token abcdefghij',
        'abcdefghij',
        'Bearer abcd efgh',
      ])
        t.same(
          errorOf(await s.app.inject({ method: 'POST', url: '/sw/signals', headers: { authorization }, payload: { $type: 'broadcast' } })),
          { status: 401, code: 'unauthorized' },
          authorization,
        )
    })
  })

  t.test('the check order of docs/protocol.md', async (t) => {
    const bad = { authorization: 'Bearer short' }
    t.test('body size comes before auth: an oversized body without a token is payload_too_large', async (t) => {
      const res = await post(s, JSON.stringify({ $type: 'x', t: 'a'.repeat(70 * 1024) }))
      t.same(errorOf(res), { status: 413, code: 'payload_too_large' })
    })
    t.test('auth comes before the envelope: a bad token with a bad body is unauthorized', async (t) => {
      for (const body of [
        '{"$type":',
        '[]',
        '',
        '{"text":"no type"}',
        '{"$type":"reply"}',
        JSON.stringify({ $type: 'x', t: 'a'.repeat(20000) }),
        '{"$type":"reply","$refId":"sw://other.example/signals/AAAAAAAAAAAAAAAAAAAA"}',
      ]) {
        t.same(errorOf(await post(s, body, bad)), { status: 401, code: 'unauthorized' }, body.slice(0, 40))
        t.same(errorOf(await post(s, body)), { status: 401, code: 'unauthorized' }, `no token, ${body.slice(0, 40)}`)
      }
    })
  })

  t.test('a request with a JSON Content-Type parameter is accepted', async (t) => {
    const res = await s.app.inject({
      method: 'POST',
      url: '/sw/signals',
      headers: { ...s.bearer(), 'content-type': 'application/json; charset=utf-8' },
      payload: '{"$type":"broadcast"}',
    })
    t.equal(res.statusCode, 200)
  })
})

t.test('board rules', async (t) => {
  const s = await startStack(t)
  const A = 'rules-token-aaaa'
  const B = 'rules-token-bbbb'
  const idA = fingerprint(defaultFingerprintKey, A)
  const idB = fingerprint(defaultFingerprintKey, B)
  const addRule = async (ruleType: string, identityId: string) =>
    (await s.app.inject({ method: 'POST', url: '/sw/admin/rules', headers: ADMIN, payload: { ruleType, identityId } })).json().rule
      .id as string
  const removeRule = async (id: string) =>
    (await s.app.inject({ method: 'DELETE', url: `/sw/admin/rules/${id}`, headers: ADMIN })).statusCode
  const setTypes = async (allowedSignalTypes: string[] | null) =>
    (await s.app.inject({ method: 'PATCH', url: '/sw/admin/wire', headers: ADMIN, payload: { allowedSignalTypes } })).statusCode

  t.test('allowedSignalTypes refuses other types with forbidden 403', async (t) => {
    t.equal(await setTypes(['offer', 'reply']), 200)
    const res = await s.publish({ $type: 'broadcast' }, A)
    t.same(errorOf(res), { status: 403, code: 'forbidden' })
    t.match(res.json().error.details, { allowedSignalTypes: ['offer', 'reply'] })
    t.equal((await s.publish({ $type: 'offer' }, A)).statusCode, 200)
    t.same(errorOf(await s.publish({ $type: 'Offer' }, A)), { status: 403, code: 'forbidden' }, 'types keep their case')
    t.equal(await setTypes(null), 200)
    t.equal((await s.publish({ $type: 'broadcast' }, A)).statusCode, 200, 'null lifts the restriction on the next publish')
  })

  t.test('a deny rule refuses that identity only', async (t) => {
    const rule = await addRule('deny', idA)
    t.same(errorOf(await s.publish({ $type: 'broadcast' }, A)), { status: 403, code: 'forbidden' })
    t.equal((await s.publish({ $type: 'broadcast' }, B)).statusCode, 200)
    t.equal(await removeRule(rule), 200)
    t.equal((await s.publish({ $type: 'broadcast' }, A)).statusCode, 200, 'effective on the next publish once removed')
  })

  t.test('any allow rule makes the board allow-list only', async (t) => {
    const rule = await addRule('allow', idA)
    t.equal((await s.publish({ $type: 'broadcast' }, A)).statusCode, 200)
    t.same(errorOf(await s.publish({ $type: 'broadcast' }, B)), { status: 403, code: 'forbidden' })
    t.same(
      errorOf(await s.publish({ $type: 'reply', $refId: 'AAAAAAAAAAAAAAAAAAAA' }, B)),
      { status: 400, code: 'invalid_request' },
      'the envelope is checked before the rules',
    )
    t.equal(await removeRule(rule), 200)
    t.equal((await s.publish({ $type: 'broadcast' }, B)).statusCode, 200)
  })

  t.test('a deny rule wins over an allow rule', async (t) => {
    const allow = await addRule('allow', idA)
    const deny = await addRule('deny', idA)
    t.same(errorOf(await s.publish({ $type: 'broadcast' }, A)), { status: 403, code: 'forbidden' })
    await removeRule(allow)
    await removeRule(deny)
  })

  t.test('a forbidden identity with a bad envelope gets the envelope error', async (t) => {
    const deny = await addRule('deny', idB)
    const cases: Array<[string, number, string]> = [
      ['{"text":"no type"}', 400, 'invalid_request'],
      ['{"$type":', 400, 'invalid_request'],
      ['{"$type":"x","$ttl":5}', 400, 'invalid_request'],
      [JSON.stringify({ $type: 'x', t: 'a'.repeat(20000) }), 413, 'payload_too_large'],
      ['{"$type":"reply"}', 400, 'reply_requires_ref'],
      ['{"$type":"reply","$refId":"AAAAAAAAAAAAAAAAAAAA"}', 400, 'invalid_request'],
      ['{"$type":"reply","$refId":"sw://other.example/signals/AAAAAAAAAAAAAAAAAAAA"}', 400, 'invalid_request'],
    ]
    for (const [body, status, code] of cases) t.same(errorOf(await post(s, body, s.bearer(B))), { status, code }, body.slice(0, 50))
    t.same(errorOf(await post(s, '{"$type":"broadcast"}', s.bearer(B))), { status: 403, code: 'forbidden' })
    await removeRule(deny)
  })
})

t.test('the rate limit', async (t) => {
  const s = await startStack(t, { env: { PUBLISH_RATE_LIMIT_MAX: '3', PUBLISH_RATE_LIMIT_WINDOW_MS: '60000' } })

  t.test('refused publishes do not use up the allowance', async (t) => {
    for (let i = 0; i < 5; i++) t.equal((await s.publish({ text: 'no type' }, 'rate-token-1')).statusCode, 400)
    for (let i = 0; i < 3; i++) t.equal((await s.publish({ $type: 'broadcast' }, 'rate-token-1')).statusCode, 200, `publish ${i + 1}`)
  })

  t.test('past the limit is rate_limited 429 with Retry-After and details', async (t) => {
    const res = await s.app.inject({
      method: 'POST',
      url: '/sw/signals',
      headers: { ...s.bearer('rate-token-1'), origin: 'https://viewer.example' },
      payload: { $type: 'broadcast' },
    })
    t.same(errorOf(res), { status: 429, code: 'rate_limited' })
    t.equal(res.headers['access-control-allow-origin'], '*')
    t.match(String(res.headers['access-control-expose-headers']), /Retry-After/i, 'a browser may read Retry-After')
    const retry = Number(res.headers['retry-after'])
    t.ok(Number.isInteger(retry) && retry >= 1 && retry <= 60, `Retry-After is whole seconds (${res.headers['retry-after']})`)
    const d = res.json().error.details
    t.same(Object.keys(d).sort(), ['limit', 'remaining', 'resetMs'])
    t.equal(d.limit, 3)
    t.equal(d.remaining, 0)
    t.ok(d.resetMs > 0 && d.resetMs <= 60000, `resetMs ${d.resetMs}`)
    t.ok(Math.abs(retry - Math.ceil(d.resetMs / 1000)) <= 1, 'Retry-After agrees with resetMs')
  })

  t.test('replies count too', async (t) => {
    const root = (await s.publish({ $type: 'broadcast' }, 'rate-token-2')).json().signal
    t.equal((await s.publish({ $type: 'reply', $refId: root.id }, 'rate-token-2')).statusCode, 200)
    t.equal((await s.publish({ $type: 'reply', $refId: root.id }, 'rate-token-2')).statusCode, 200)
    t.same(errorOf(await s.publish({ $type: 'reply', $refId: root.id }, 'rate-token-2')), { status: 429, code: 'rate_limited' })
  })

  t.test('another identity has its own allowance', async (t) => {
    t.equal((await s.publish({ $type: 'broadcast' }, 'rate-token-3')).statusCode, 200)
  })

  t.test('board rules come before the rate limit', async (t) => {
    const id = fingerprint(defaultFingerprintKey, 'rate-token-1')
    const rule = await s.app.inject({
      method: 'POST',
      url: '/sw/admin/rules',
      headers: ADMIN,
      payload: { ruleType: 'deny', identityId: id },
    })
    t.same(errorOf(await s.publish({ $type: 'broadcast' }, 'rate-token-1')), { status: 403, code: 'forbidden' })
    await s.app.inject({ method: 'DELETE', url: `/sw/admin/rules/${rule.json().rule.id}`, headers: ADMIN })
  })

  t.test('the envelope comes before the rate limit', async (t) => {
    t.same(errorOf(await s.publish({ $type: 'reply' }, 'rate-token-1')), { status: 400, code: 'reply_requires_ref' })
  })

  t.test('a burst of concurrent publishes lets exactly the allowance through', async (t) => {
    const res = await Promise.all(Array.from({ length: 8 }, () => s.publish({ $type: 'broadcast' }, 'rate-token-burst')))
    t.equal(res.filter((r) => r.statusCode === 200).length, 3)
    t.equal(res.filter((r) => r.statusCode === 429).length, 5)
  })
})

t.test('local mode with LOCAL_IDENTITY_VERIFIED=0', async (t) => {
  const s = await startStack(t, {
    env: { LOCAL_IDENTITY_VERIFIED: '0', UNVERIFIED_RATE_LIMIT_MAX: '3', FINGERPRINT_SECRET: 'fixed-fingerprint-secret' },
  })

  t.test('the fingerprint key is FINGERPRINT_SECRET when set', async (t) => {
    const sig = (await s.publish({ $type: 'broadcast' }, 'unverified-token-0')).json().signal
    t.equal(sig.origin, fingerprint('fixed-fingerprint-secret', 'unverified-token-0'))
  })

  t.test('an unknown token is unverified and may open one thread a day', async (t) => {
    const first = await s.publish({ $type: 'broadcast', text: 'first' }, 'unverified-token-1')
    t.equal(first.statusCode, 200)
    t.equal(first.json().signal.originVerified, false)
    const second = await s.publish({ $type: 'broadcast', text: 'second' }, 'unverified-token-1')
    t.same(errorOf(second), { status: 403, code: 'unverified_limited' })

    t.test('while replies are not thread-limited', async (t) => {
      const root = first.json().signal
      const reply = await s.publish({ $type: 'reply', $refId: root.id }, 'unverified-token-1')
      t.equal(reply.statusCode, 200)
      t.equal(reply.json().signal.originVerified, false)
    })
  })

  t.test('standing comes before the rate limit, and the rate limit is UNVERIFIED_RATE_LIMIT_MAX', async (t) => {
    const root = (await s.publish({ $type: 'broadcast' }, 'unverified-token-2')).json().signal // 1 of 3
    t.equal((await s.publish({ $type: 'reply', $refId: root.id }, 'unverified-token-2')).statusCode, 200) // 2 of 3
    t.equal((await s.publish({ $type: 'reply', $refId: root.id }, 'unverified-token-2')).statusCode, 200) // 3 of 3
    t.same(errorOf(await s.publish({ $type: 'broadcast' }, 'unverified-token-2')), { status: 403, code: 'unverified_limited' })
    const limited = await s.publish({ $type: 'reply', $refId: root.id }, 'unverified-token-2')
    t.same(errorOf(limited), { status: 429, code: 'rate_limited' })
    t.match(limited.json().error.details, { limit: 3, remaining: 0 })
    t.ok(Number(limited.headers['retry-after']) >= 1)
  })

  t.test('board rules come before standing', async (t) => {
    const id = fingerprint('fixed-fingerprint-secret', 'unverified-token-1')
    const rule = (
      await s.app.inject({ method: 'POST', url: '/sw/admin/rules', headers: ADMIN, payload: { ruleType: 'deny', identityId: id } })
    ).json().rule
    t.same(errorOf(await s.publish({ $type: 'broadcast' }, 'unverified-token-1')), { status: 403, code: 'forbidden' })
    await s.app.inject({ method: 'DELETE', url: `/sw/admin/rules/${rule.id}`, headers: ADMIN })
  })

  t.test('concurrent thread openings cannot overrun the daily thread limit', async (t) => {
    const res = await Promise.all(Array.from({ length: 5 }, (_, i) => s.publish({ $type: 'broadcast', i }, 'unverified-token-race')))
    t.same(res.map((r) => r.statusCode).sort(), [200, 403, 403, 403, 403])
  })

  t.test('an allow rule makes the identity verified', async (t) => {
    const token = 'unverified-token-3'
    const id = fingerprint('fixed-fingerprint-secret', token)
    t.equal((await s.publish({ $type: 'broadcast' }, token)).json().signal.originVerified, false)
    const rule = (
      await s.app.inject({ method: 'POST', url: '/sw/admin/rules', headers: ADMIN, payload: { ruleType: 'allow', identityId: id } })
    ).json().rule
    for (let i = 0; i < 5; i++) {
      const res = await s.publish({ $type: 'broadcast', i }, token)
      t.equal(res.statusCode, 200, `thread ${i + 2} and past the unverified rate limit`)
      t.equal(res.json().signal.originVerified, true)
    }
    await s.app.inject({ method: 'DELETE', url: `/sw/admin/rules/${rule.id}`, headers: ADMIN })
    t.same(
      errorOf(await s.publish({ $type: 'broadcast' }, token)),
      { status: 403, code: 'unverified_limited' },
      'unverified again once the rule is gone',
    )
  })
})

t.test('LOCAL_IDENTITY_VERIFIED=0 with UNVERIFIED_THREADS_PER_DAY=3', async (t) => {
  const s = await startStack(t, { env: { LOCAL_IDENTITY_VERIFIED: '0', UNVERIFIED_THREADS_PER_DAY: '3' } })
  for (let i = 0; i < 3; i++) t.equal((await s.publish({ $type: 'broadcast', i }, 'threads-token')).statusCode, 200, `thread ${i + 1}`)
  const res = await s.publish({ $type: 'broadcast' }, 'threads-token')
  t.same(errorOf(res), { status: 403, code: 'unverified_limited' })
  t.match(res.json().error.details, { limit: 3 })
})

t.test('the check order around standing (network mode)', async (t) => {
  const fake = await startFakeIdentity(t, {
    'net-broke-token': { identityId: 'id_broke', verified: true, bits: 0 },
    'net-rich-token': { identityId: 'id_rich', verified: true, bits: 10 },
  })
  const s = await startStack(t, { env: { IDENTITY_URL: fake.url, PUBLISH_RATE_LIMIT_MAX: '2' } })

  t.test('a thread without standing is insufficient_standing 402 with details', async (t) => {
    const res = await s.publish({ $type: 'broadcast' }, 'net-broke-token')
    t.same(errorOf(res), { status: 402, code: 'insufficient_standing' })
    t.same(res.json().error.details, { required: 1, bits: 0 })
  })
  t.test('the envelope comes before standing', async (t) => {
    t.same(errorOf(await s.publish({ text: 'no type' }, 'net-broke-token')), { status: 400, code: 'invalid_request' })
    t.same(errorOf(await s.publish({ $type: 'reply' }, 'net-broke-token')), { status: 400, code: 'reply_requires_ref' })
  })
  t.test('board rules come before standing', async (t) => {
    const rule = (
      await s.app.inject({ method: 'POST', url: '/sw/admin/rules', headers: ADMIN, payload: { ruleType: 'deny', identityId: 'id_broke' } })
    ).json().rule
    t.same(errorOf(await s.publish({ $type: 'broadcast' }, 'net-broke-token')), { status: 403, code: 'forbidden' })
    await s.app.inject({ method: 'DELETE', url: `/sw/admin/rules/${rule.id}`, headers: ADMIN })
  })
  t.test('standing comes before the rate limit', async (t) => {
    const root = (await s.publish({ $type: 'broadcast' }, 'net-rich-token')).json().signal
    t.equal((await s.publish({ $type: 'reply', $refId: root.id }, 'net-broke-token')).statusCode, 200, 'replies are never gated')
    t.equal((await s.publish({ $type: 'reply', $refId: root.id }, 'net-broke-token')).statusCode, 200)
    t.same(errorOf(await s.publish({ $type: 'broadcast' }, 'net-broke-token')), { status: 402, code: 'insufficient_standing' })
    t.same(errorOf(await s.publish({ $type: 'reply', $refId: root.id }, 'net-broke-token')), { status: 429, code: 'rate_limited' })
  })
})
