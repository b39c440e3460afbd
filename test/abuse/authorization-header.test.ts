import t from 'tap'
import { bearerToken, MAX_AUTHORIZATION_LENGTH } from '../../libs/shared/auth/bearer.js'
import { startStack } from '../helpers/stack.js'

// A Bearer header built to make a backtracking parser quadratic ("Bearer a", 15,900 spaces, "b")
// is answered like any malformed header on every route, and the parser takes the right decision on
// pathological inputs. Its cost is measured in bench/, not asserted here.

const PATHOLOGICAL = `Bearer a${' '.repeat(15_900)}b`
const refusal = (f: () => unknown) => {
  try {
    f()
    return null
  } catch (err) {
    return (err as { code?: string }).code ?? 'thrown'
  }
}

t.test('the parser decides right on pathological inputs', async (t) => {
  t.equal(
    refusal(() => bearerToken(PATHOLOGICAL)),
    'unauthorized',
    'over-long header refused before parsing',
  )
  const inside = `Bearer a${' '.repeat(MAX_AUTHORIZATION_LENGTH - 12)}b`
  t.ok(inside.length <= MAX_AUTHORIZATION_LENGTH)
  t.equal(
    refusal(() => bearerToken(inside)),
    'unauthorized',
    'white space inside a token, within the cap',
  )
  t.equal(bearerToken(`Bearer abcdefgh${' '.repeat(MAX_AUTHORIZATION_LENGTH - 20)}`), 'abcdefgh', 'trailing white space is trimmed')
  t.equal(bearerToken(`${'\t'.repeat(30)}bEaReR \t  tok-12345 `), 'tok-12345')
  t.equal(bearerToken(undefined), null)
  for (const bad of [
    'Bearer',
    'Bearer ',
    'Bearer    ',
    'Bearertoken',
    'Basic dXNlcjpwYXNz',
    'Bearer a\u0000b',
    'Bearer a\u00a0b',
    ' '.repeat(4000),
  ])
    t.equal(
      refusal(() => bearerToken(bad)),
      'unauthorized',
      JSON.stringify(bad.slice(0, 20)),
    )
  t.equal(
    refusal(() => bearerToken(['Bearer a', 'Bearer b'])),
    'unauthorized',
  )
})

t.test('a token holds any character but white space and control characters, each of the 65,536 code units', async (t) => {
  const wrong: string[] = []
  for (let c = 0; c <= 0xffff; c++) {
    const ch = String.fromCharCode(c)
    const refused = c <= 0x1f || c === 0x7f || /\s/.test(ch)
    if ((refusal(() => bearerToken(`Bearer a${ch}b`)) === 'unauthorized') !== refused) wrong.push(c.toString(16))
  }
  t.same(wrong, [], "refused exactly when white space (JavaScript's \\s), a C0 control or DEL")
  t.equal(bearerToken('Bearer tök€n-😀'), 'tök€n-😀', 'other characters are the token')
})

t.test('every route answers the pathological header with its 401 or ignores it', async (t) => {
  const s = await startStack(t, { noRedis: true })
  const headers = { authorization: PATHOLOGICAL }
  const pub = await s.app.inject({
    method: 'POST',
    url: '/sw/signals',
    headers: { ...headers, 'content-type': 'application/json' },
    payload: '{"$type":"x"}',
  })
  t.equal(pub.statusCode, 401)
  t.equal(pub.json().error.code, 'unauthorized')
  const admin = await s.app.inject({ method: 'GET', url: '/sw/admin/rules', headers })
  t.equal(admin.statusCode, 401)
  const read = await s.app.inject({ url: '/sw/signals', headers })
  t.equal(read.statusCode, 200, 'a read ignores a token it cannot use')
  const a2a = await s.app.inject({
    method: 'POST',
    url: '/a2a',
    headers: { ...headers, 'content-type': 'application/json' },
    payload: { jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { id: 'x' } },
  })
  t.ok(a2a.statusCode < 500, `a2a answers ${a2a.statusCode}`)
  t.same((await s.read()).signals, [], 'nothing was stored')
})
