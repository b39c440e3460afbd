import t, { type Test } from 'tap'
import type { InjectOptions } from 'fastify'
import { startStack, type Stack } from '../helpers/stack.js'

// Hostile and malformed input on every route: each gets a 4xx JSON error with the spec's code,
// never a 5xx, a hang or a crash, and nothing stored changes.

const ADMIN = { authorization: 'Bearer admin-secret-token' }
const JSON_CT = { 'content-type': 'application/json' }
const ID = 'AAAAAAAAAAAAAAAAAAAA'

type Res = Awaited<ReturnType<Stack['app']['inject']>>

/** Everything stored: rows as the database holds them, plus what a reader sees. */
async function snapshot(s: Stack, signalId: string) {
  const q = async (sql: string) => (await s.infra.primary.query(sql)).rows
  const byId = (await s.app.inject({ url: `/sw/signals/${signalId}` })).body.replace(/"serverNow":"[^"]+"/, '')
  const feed = await s.read('limit=100&includeExpired=1')
  return {
    signals: await q(
      `select seq, id, origin, type, tags, payload, ref_id, expires_at, pinned, removed_at from "${s.schema}".signals order by seq`,
    ),
    head: await q(`select seq from "${s.schema}".feed_head`),
    board: await q(`select name, description, allowed_signal_types from "${s.schema}".board`),
    rules: await q(`select id, rule_type, identity_id from "${s.schema}".rules order by id`),
    byId,
    feed: { ids: feed.signals.map((x: { id: string }) => x.id), nextCursor: feed.nextCursor },
  }
}

function withTimeout<T>(p: Promise<T>, ms = 5000): Promise<T> {
  let timer: NodeJS.Timeout
  return Promise.race([
    p,
    new Promise<T>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms))),
  ]).finally(() => clearTimeout(timer))
}

t.test('bad input', async (t) => {
  const s = await startStack(t)
  const root = (await s.publish({ $type: 'request', $tags: ['keep'], text: 'keep me' }, 'bad-input-owner')).json().signal
  await s.publish({ $type: 'reply', $refId: root.id, text: 'reply' }, 'bad-input-owner')
  const rule = await s.app.inject({
    method: 'POST',
    url: '/sw/admin/rules',
    headers: ADMIN,
    payload: { ruleType: 'deny', identityId: 'fp_blocked' },
  })
  t.equal(rule.statusCode, 201)
  // re-taken only after a failed comparison, so one leak fails one assertion, not every later one
  let before = await snapshot(s, root.id)
  const unchanged = async (t: Test, name: string) => {
    const now = await snapshot(s, root.id)
    if (!t.same(now, before, `${name}: nothing stored changed`)) before = now
  }

  /** Sends `req`; asserts a JSON error with `status` and `code`, within 5 s, and nothing stored changed. */
  const refused = async (
    t: Test,
    req: InjectOptions,
    status: number,
    code: string,
    name = `${req.method ?? 'GET'} ${String(req.url).slice(0, 80)}`,
  ) => {
    let res: Res
    try {
      res = await withTimeout(s.app.inject(req))
    } catch (err) {
      t.fail(`${name}: ${(err as Error).message}`)
      return
    }
    t.equal(res.statusCode, status, `${name}: status`)
    t.match(res.headers['content-type'], /^application\/json/, `${name}: JSON`)
    let body: any
    try {
      body = res.json()
    } catch {
      t.fail(`${name}: the body is not JSON: ${res.body.slice(0, 100)}`)
      return
    }
    t.equal(body?.error?.code, code, `${name}: code`)
    t.type(body?.error?.message, 'string', `${name}: message`)
    await unchanged(t, name)
  }

  /** For input that may be valid: no 5xx, no hang, JSON, and an error is shaped like one. */
  const answered = async (t: Test, req: InjectOptions, name = `${req.method ?? 'GET'} ${String(req.url).slice(0, 80)}`) => {
    let res: Res
    try {
      res = await withTimeout(s.app.inject(req))
    } catch (err) {
      t.fail(`${name}: ${(err as Error).message}`)
      return
    }
    t.ok(res.statusCode < 500, `${name}: ${res.statusCode} is not a server error`)
    let body: any
    try {
      body = res.json()
    } catch {
      t.fail(`${name}: the body is not JSON: ${res.body.slice(0, 100)}`)
      return
    }
    if (res.statusCode >= 400) t.equal(body?.error?.code, 'invalid_request', `${name}: ${res.statusCode} is invalid_request`)
    await unchanged(t, name)
  }

  const publish = (payload: string | Buffer, headers: Record<string, string> = { ...JSON_CT, ...s.bearer() }): InjectOptions => ({
    method: 'POST',
    url: '/sw/signals',
    headers,
    payload,
  })

  t.test('malformed JSON is invalid_request', async (t) => {
    for (const body of [
      '{"$type":',
      '{',
      '}',
      'nope',
      "{'$type':'x'}",
      '{"$type":"x",}',
      '{"$type":"x"} trailing',
      '{"$type":"x"}{"$type":"y"}',
      '{"$type":"x\u0000"}',
      '\ufeff{"$type":"x"}',
      '{"$type":"x",\n"a":NaN}',
      '{"$type":"x","a":undefined}',
      '{"a":01}',
    ])
      await refused(t, publish(body), 400, 'invalid_request', JSON.stringify(body))
    await refused(t, publish(''), 400, 'invalid_request', 'an empty body')
  })

  t.test('a body that is not valid UTF-8 is invalid_request', async (t) => {
    const raw = Buffer.concat([Buffer.from('{"$type":"x","t":"'), Buffer.from([0xed, 0xa0, 0x80, 0xff]), Buffer.from('"}')])
    await refused(t, publish(raw), 400, 'invalid_request')
  })

  t.test('a wrong or missing Content-Type is invalid_request', async (t) => {
    const body = '{"$type":"broadcast","text":"typed wrong"}'
    for (const ct of [
      'text/plain',
      'text/plain; charset=utf-8',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/xml',
      'application/jsonx',
      'image/png',
    ])
      await refused(t, publish(body, { ...s.bearer(), 'content-type': ct }), 400, 'invalid_request', ct)
    await refused(t, publish(Buffer.from(body), s.bearer()), 400, 'invalid_request', 'no Content-Type')
  })

  t.test('a body over 64 KiB is payload_too_large 413 on every route that takes one', async (t) => {
    const big = JSON.stringify({ $type: 'broadcast', text: 'x'.repeat(70 * 1024) })
    await refused(t, publish(big), 413, 'payload_too_large', 'publish')
    await refused(t, publish(big, JSON_CT), 413, 'payload_too_large', 'publish without a token')
    await refused(t, publish('x'.repeat(1024 * 1024)), 413, 'payload_too_large', 'a megabyte of garbage')
    await refused(
      t,
      { method: 'POST', url: '/sw/v1/signals', headers: { ...JSON_CT, ...s.bearer() }, payload: big },
      413,
      'payload_too_large',
      'v1 publish',
    )
    await refused(
      t,
      {
        method: 'PATCH',
        url: '/sw/admin/wire',
        headers: { ...JSON_CT, ...ADMIN },
        payload: JSON.stringify({ description: 'x'.repeat(70 * 1024) }),
      },
      413,
      'payload_too_large',
      'admin PATCH',
    )
    await refused(
      t,
      {
        method: 'POST',
        url: '/sw/admin/rules',
        headers: { ...JSON_CT, ...ADMIN },
        payload: JSON.stringify({ ruleType: 'deny', identityId: 'x'.repeat(70 * 1024) }),
      },
      413,
      'payload_too_large',
      'admin rules',
    )
  })

  t.test('deep nesting is invalid_request', async (t) => {
    const levels = (n: number) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`
    await refused(t, publish(`{"$type":"x","d":${levels(32)}}`), 400, 'invalid_request', '33 levels')
    await refused(t, publish(`{"$type":"x","d":${'['.repeat(30000)}${']'.repeat(30000)}}`), 400, 'invalid_request', '30000 arrays')
    await refused(t, publish(`{"$type":"x","d":${levels(10000)}}`), 400, 'invalid_request', '10000 objects')
    await refused(
      t,
      { method: 'PATCH', url: '/sw/admin/wire', headers: { ...JSON_CT, ...ADMIN }, payload: `{"name":"x","d":${levels(40)}}` },
      400,
      'invalid_request',
      'admin PATCH',
    )
  })

  t.test('__proto__ and constructor keys are invalid_request, top level and nested', async (t) => {
    for (const body of [
      '{"$type":"x","__proto__":{"polluted":true}}',
      '{"__proto__":{"$type":"x"},"$type":"y"}',
      '{"$type":"x","a":{"__proto__":{"polluted":true}}}',
      '{"$type":"x","a":[{"__proto__":1}]}',
      '{"$type":"x","constructor":{"prototype":{"polluted":true}}}',
      '{"$type":"x","a":{"b":{"constructor":1}}}',
    ])
      await refused(t, publish(body), 400, 'invalid_request', body)
    await refused(
      t,
      { method: 'PATCH', url: '/sw/admin/wire', headers: { ...JSON_CT, ...ADMIN }, payload: '{"__proto__":{"name":"x"}}' },
      400,
      'invalid_request',
      'admin PATCH',
    )
    await refused(
      t,
      {
        method: 'POST',
        url: '/sw/admin/rules',
        headers: { ...JSON_CT, ...ADMIN },
        payload: '{"ruleType":"deny","identityId":"x","constructor":{}}',
      },
      400,
      'invalid_request',
      'admin rules',
    )
    t.equal(({} as Record<string, unknown>).polluted, undefined, 'no prototype was polluted')
  })

  t.test('NUL characters are invalid_request, in values and in keys', async (t) => {
    for (const body of [
      '{"$type":"x","t":"a\\u0000b"}',
      '{"$type":"x","k\\u0000":1}',
      '{"$type":"x\\u0000"}',
      '{"$type":"x","$tags":["a\\u0000"]}',
      '{"$type":"x","a":{"b":["\\u0000"]}}',
    ])
      await refused(t, publish(body), 400, 'invalid_request', body)
    await refused(
      t,
      { method: 'PATCH', url: '/sw/admin/wire', headers: { ...JSON_CT, ...ADMIN }, payload: '{"name":"a\\u0000"}' },
      400,
      'invalid_request',
      'admin name',
    )
    await refused(
      t,
      {
        method: 'POST',
        url: '/sw/admin/rules',
        headers: { ...JSON_CT, ...ADMIN },
        payload: '{"ruleType":"deny","identityId":"fp\\u0000"}',
      },
      400,
      'invalid_request',
      'admin rule',
    )
  })

  t.test('lone surrogates are invalid_request', async (t) => {
    for (const body of [
      '{"$type":"x","t":"\\ud800"}',
      '{"$type":"x","t":"a\\udfffb"}',
      '{"$type":"x","\\ud800":1}',
      '{"$type":"\\udbff"}',
      '{"$type":"x","$tags":["\\ud800"]}',
      '{"$type":"x","a":[["\\udc00"]]}',
    ])
      await refused(t, publish(body), 400, 'invalid_request', body)
    await refused(
      t,
      { method: 'PATCH', url: '/sw/admin/wire', headers: { ...JSON_CT, ...ADMIN }, payload: '{"allowedSignalTypes":["\\ud800"]}' },
      400,
      'invalid_request',
      'admin types',
    )
  })

  t.test('huge numbers are invalid_request', async (t) => {
    for (const body of ['{"$type":"x","n":1e400}', '{"$type":"x","n":-1e400}', '{"$type":"x","$ttl":1e400}', '{"$type":"x","a":[1e309]}'])
      await refused(t, publish(body), 400, 'invalid_request', body)
  })

  t.test('anything but an object is invalid_request', async (t) => {
    for (const body of ['[]', '[{"$type":"x"}]', '"broadcast"', 'null', '0', '-1', 'true', 'false', '1e400'])
      await refused(t, publish(body), 400, 'invalid_request', body)
    for (const body of ['[]', '"x"', 'null', '5'])
      await refused(
        t,
        { method: 'PATCH', url: '/sw/admin/wire', headers: { ...JSON_CT, ...ADMIN }, payload: body },
        400,
        'invalid_request',
        `admin PATCH ${body}`,
      )
    for (const body of ['[]', '"x"', 'null', '5', ''])
      await refused(
        t,
        { method: 'POST', url: '/sw/admin/rules', headers: { ...JSON_CT, ...ADMIN }, payload: body },
        400,
        'invalid_request',
        `admin rules ${body}`,
      )
  })

  t.test('duplicate keys are invalid_request', async (t) => {
    await refused(t, publish('{"$type":"x","$type":"y"}'), 400, 'invalid_request')
    await refused(t, publish('{"$type":"x","a":1,"a":2}'), 400, 'invalid_request')
  })

  t.test('odd Authorization headers are unauthorized', async (t) => {
    const odd = [
      'Bearer',
      'Bearer ',
      'Bearer      ',
      'Basic x',
      'Basic YWxhZGRpbjpvcGVuc2VzYW1l',
      'Bearer  a b',
      'Bearer abcdefgh ijkl',
      `Bearer ${'x'.repeat(5000)}`,
      'Bearer é',
      'Bearer ñ',
      'Bearerabcdefghij',
      'Token abcdefghij',
      'abcdefghij',
      '',
      'Bearer short',
    ]
    for (const authorization of odd) {
      await refused(
        t,
        publish('{"$type":"broadcast"}', { ...JSON_CT, authorization }),
        401,
        'unauthorized',
        `publish with ${JSON.stringify(authorization.slice(0, 30))}`,
      )
      await refused(
        t,
        { url: '/sw/admin/wire', headers: { authorization } },
        401,
        'unauthorized',
        `admin with ${JSON.stringify(authorization.slice(0, 30))}`,
      )
    }
  })

  t.test('odd Authorization headers on reads are ignored', async (t) => {
    for (const authorization of ['Bearer', 'Basic x', 'Bearer  a b', `Bearer ${'x'.repeat(5000)}`, 'Bearer é'])
      for (const url of ['/sw/signals', `/sw/signals/${root.id}`, '/sw/wire', '/.well-known/wire']) {
        const res = await s.app.inject({ url, headers: { authorization } })
        t.equal(res.statusCode, 200, `${url} with ${authorization.slice(0, 20)}`)
      }
  })

  t.test('garbage in GET /sw/signals parameters', async (t) => {
    const garbage = [
      'abc',
      '-1',
      '1.5',
      '1e400',
      '%00',
      'a%00b',
      '%ED%A0%80',
      '%ZZ',
      '%',
      'x'.repeat(5000),
      '%F0%9F%92%A9',
      '%20',
      '%0A',
      "'%20or%201=1--",
      '[]',
      '{}',
      'NaN',
      'Infinity',
      '0x10',
    ]
    const strict: Record<string, string[]> = {
      cursor: ['abc', '-1', '1.5', '1e400', '%00', 'a%00b', 'x'.repeat(5000), '%F0%9F%92%A9', '%20', '[]', 'NaN', 'Infinity', '0x10'],
      limit: ['abc', '1.5', '1e400', '%00', 'x'.repeat(5000), 'NaN', '0x10'],
      wait: ['abc', '1e400', '%00', 'x'.repeat(5000), 'NaN', 'Infinity', '0x10', '%20'],
      since: ['abc', '-1', '1e400', '%00', 'x'.repeat(5000), 'NaN', '0x10', '[]'],
      includeExpired: ['abc', '-1', '1.5', '%00', 'x'.repeat(5000), '[]'],
      type: ['%00', 'a%00b', 'x'.repeat(5000)],
      origin: ['%00', 'x'.repeat(5000)],
      q: ['%00', 'x'.repeat(5000)],
      tag: ['%00', 'x'.repeat(5000)],
    }
    for (const [param, bad] of Object.entries(strict)) {
      for (const v of garbage) {
        const url = `/sw/signals?${param}=${v}`
        if (bad.includes(v)) await refused(t, { url }, 400, 'invalid_request', `${param}=${v.slice(0, 20)}`)
        else await answered(t, { url }, `${param}=${v.slice(0, 20)}`)
      }
    }
  })

  t.test('an empty cursor is invalid_request, saying so: it never restarts a follower at the newest page', async (t) => {
    for (const url of ['/sw/signals?cursor=', '/sw/signals?cursor=&wait=25', '/sw/v1/signals?tag=a&cursor='])
      await refused(t, { url }, 400, 'invalid_request', url)
    t.match((await s.app.inject({ url: '/sw/signals?cursor=' })).json().error.message, /cursor is empty/)
  })

  t.test('a parameter given twice is invalid_request, except tag', async (t) => {
    for (const param of ['cursor', 'limit', 'wait', 'type', 'origin', 'q', 'since', 'includeExpired'])
      await refused(t, { url: `/sw/signals?${param}=1&${param}=1` }, 400, 'invalid_request', `${param} twice`)
    await answered(t, { url: '/sw/signals?tag=a&tag=b' })
    await refused(
      t,
      { url: `/sw/signals?${Array.from({ length: 65 }, (_, i) => `tag=t${i}`).join('&')}` },
      400,
      'invalid_request',
      '65 tag parameters',
    )
  })

  t.test('garbage in the parameters of the other GET routes', async (t) => {
    await refused(t, { url: '/sw/tags?q=%00' }, 400, 'invalid_request', 'tags q NUL')
    await refused(t, { url: `/sw/tags?q=${'x'.repeat(65)}` }, 400, 'invalid_request', 'tags q too long')
    await refused(t, { url: '/sw/tags?q=a&q=b' }, 400, 'invalid_request', 'tags q twice')
    for (const limit of ['abc', '-1', '1.5', '1e400', '%00', 'x'.repeat(5000)])
      await refused(t, { url: `/sw/tags?limit=${limit}` }, 400, 'invalid_request', `tags limit=${limit.slice(0, 10)}`)
    for (const q of ['%ED%A0%80', '%ZZ', '%F0%9F%92%A9', "'%20or%201=1--", '%25', '_'])
      await answered(t, { url: `/sw/tags?q=${q}` }, `tags q=${q}`)
    for (const p of ['bucketSeconds', 'buckets'])
      for (const v of ['abc', '1.5', '1e400', '%00', 'x'.repeat(5000), '-1', '99999999999'])
        await answered(t, { url: `/sw/stats?${p}=${v}` }, `stats ${p}=${v.slice(0, 10)}`)
    const junk = `cursor=%00&limit=x&q=%ZZ&tag[]=1&__proto__=1&constructor=2&x=${'y'.repeat(5000)}`
    for (const url of [
      `/sw/signals/${root.id}`,
      `/sw/signals/${root.id}/thread`,
      '/sw/wire',
      '/.well-known/wire',
      '/',
      '/healthz',
      '/readyz',
    ])
      await answered(t, { url: `${url}?${junk}` })
    for (const url of ['/sw/admin/wire', '/sw/admin/rules']) await answered(t, { url: `${url}?${junk}`, headers: ADMIN })
  })

  t.test('ids with odd characters are not_found', async (t) => {
    const odd = [
      '..',
      '%2e%2e',
      '..%2F..%2Fetc%2Fpasswd',
      '%2F',
      '%3Cscript%3E',
      '%00',
      `${ID.slice(1)}%00`,
      'a'.repeat(2000),
      '%F0%9F%92%A9',
      '%20',
      `${ID}%20`,
      "'%20or%201=1--",
      'sw:',
      'sw%3A%2F%2F',
      `sw%3A%2F%2Fother.example%2Fsignals%2F${ID}`,
      ID.slice(1),
      `${ID}A`,
      ID.toLowerCase(),
    ]
    for (const id of odd) {
      await refused(t, { url: `/sw/signals/${id}` }, 404, 'not_found', `GET ${id.slice(0, 30)}`)
      await refused(t, { url: `/sw/signals/${id}/thread` }, 404, 'not_found', `GET ${id.slice(0, 30)}/thread`)
      await refused(t, { method: 'DELETE', url: `/sw/admin/signals/${id}`, headers: ADMIN }, 404, 'not_found', `DELETE ${id.slice(0, 30)}`)
      await refused(t, { method: 'POST', url: `/sw/admin/signals/${id}/pin`, headers: ADMIN }, 404, 'not_found', `pin ${id.slice(0, 30)}`)
      await refused(
        t,
        { method: 'DELETE', url: `/sw/admin/rules/${id}`, headers: ADMIN },
        404,
        'not_found',
        `DELETE rule ${id.slice(0, 30)}`,
      )
    }
  })

  t.test('a path that is not valid percent-encoding is invalid_request', async (t) => {
    for (const url of [
      '/sw/signals/%ZZ',
      '/sw/signals/%E0%A4%A',
      `/sw/signals/${ID}%`,
      '/sw/signals/%ED%A0%80',
      '/sw/signals/%ED%A0%80/thread',
      '/sw/admin/rules/%ZZ',
      '/sw/admin/signals/%ED%A0%80/pin',
    ])
      await refused(t, { url, headers: ADMIN }, 400, 'invalid_request', url)
  })

  t.test('errors answered before routing are JSON with CORS too', async (t) => {
    const res = await s.app.inject({ url: '/sw/signals/%ZZ', headers: { origin: 'https://viewer.example' } })
    t.equal(res.headers['access-control-allow-origin'], '*')
    t.same(res.json(), { error: { code: 'invalid_request', message: res.json().error.message } })
  })

  t.test('the board still answers after all of it', async (t) => {
    t.same((await s.app.inject({ url: '/healthz' })).json(), { ok: true })
    t.equal((await s.publish({ $type: 'broadcast', text: 'still here' })).statusCode, 200)
  })
})
