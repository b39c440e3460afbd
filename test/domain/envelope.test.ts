import t, { type Test } from 'tap'
import {
  LIMITS,
  WireError,
  isSignalId,
  newSignalId,
  parseEnvelope,
  parseRawObject,
  parseSignalRef,
} from '../../libs/shared/domain/index.js'

// Pure functions: the publish envelope (docs/protocol.md "Signals"), the verbatim payload, and signal ids.

const DEFAULT_TTL = 43200
const parse = (body: string) => parseEnvelope(body, DEFAULT_TTL)
const obj = (o: Record<string, unknown>) => parse(JSON.stringify(o))

/** Asserts that `fn` throws a WireError with `code` (and, if given, details matching `details`). */
function refuses(t: Test, fn: () => unknown, code: string, details?: Record<string, unknown>, message?: RegExp) {
  try {
    fn()
  } catch (err) {
    t.ok(err instanceof WireError, 'a WireError')
    t.equal((err as WireError).code, code)
    if (details) t.match((err as WireError).details, details)
    if (message) t.match((err as WireError).message, message)
    return
  }
  t.fail(`expected ${code}, nothing was thrown`)
}

t.test('the payload is kept verbatim', async (t) => {
  t.test('keys keep the publisher order, integer-like keys such as "2" included', async (t) => {
    const env = parse('{"b":1,"2":"two","$type":"offer","a":{"z":1,"y":[1,2]},"10":null,"$tags":["x"]}')
    t.equal(env.payloadText, '{"b":1,"2":"two","$type":"offer","a":{"z":1,"y":[1,2]},"10":null,"$tags":["x"]}')
  })

  t.test('unknown keys, also unknown $-keys, are kept', async (t) => {
    const env = parse('{"$type":"offer","$meta":{"k":"v"},"price":{"amount":5,"cur":"EUR"},"list":[true,false,null]}')
    t.equal(env.payloadText, '{"$type":"offer","$meta":{"k":"v"},"price":{"amount":5,"cur":"EUR"},"list":[true,false,null],"$tags":[]}')
  })

  t.test('number and string text is kept as sent', async (t) => {
    const env = parse('{"$type":"x","big":12345678901234567890,"f":1.50,"e":1E2,"esc":"\\u00e9\\n","neg":-0}')
    t.equal(env.payloadText, '{"$type":"x","big":12345678901234567890,"f":1.50,"e":1E2,"esc":"\\u00e9\\n","neg":-0,"$tags":[]}')
  })

  t.test('$ttl and $refId are removed wherever they stand', async (t) => {
    const env = parse('{"$ttl":60,"$type":"reply","$refId":"AAAAAAAAAAAAAAAAAAAA","text":"hi"}')
    t.equal(env.payloadText, '{"$type":"reply","text":"hi","$tags":[]}')
    t.equal(env.ttl, 60)
    t.equal(env.ref, 'AAAAAAAAAAAAAAAAAAAA')
  })

  t.test('$type and $tags are normalised in place', async (t) => {
    const env = parse('{"a":1,"$tags":[" News ","NEWS","","Ops"],"b":2,"$type":"  offer  ","c":3}')
    t.equal(env.payloadText, '{"a":1,"$tags":["news","ops"],"b":2,"$type":"offer","c":3}')
    t.equal(env.type, 'offer')
    t.same(env.tags, ['news', 'ops'])
  })

  t.test('$tags is appended when absent and written in place when null', async (t) => {
    t.equal(parse('{"$type":"x","text":"hi"}').payloadText, '{"$type":"x","text":"hi","$tags":[]}')
    t.equal(parse('{"$tags":null,"$type":"x"}').payloadText, '{"$tags":[],"$type":"x"}')
  })

  t.test('whitespace between top-level members is dropped, nested text is kept', async (t) => {
    const env = parse('{ "$type" : "x" ,\n  "a" : [ 1, 2 ] }')
    t.equal(env.payloadText, '{"$type":"x","a":[ 1, 2 ],"$tags":[]}')
    t.same(JSON.parse(env.payloadText), { $type: 'x', a: [1, 2], $tags: [] })
  })

  t.test('a value ends at its last character, whatever whitespace follows it', async (t) => {
    const env = parse('{"$type":"x","a":"s\\"t" \t,"b":1\r\n,"c":{"d":[1]} \n}')
    t.equal(env.payloadText, '{"$type":"x","a":"s\\"t","b":1,"c":{"d":[1]},"$tags":[]}')
  })

  t.test('escaped keys stay escaped and still name the envelope fields', async (t) => {
    const env = parse('{"\\u0024type":"offer","\\u0024ttl":30,"t\\u00e9":1}')
    t.equal(env.type, 'offer')
    t.equal(env.ttl, 30)
    t.equal(env.payloadText, '{"\\u0024type":"offer","t\\u00e9":1,"$tags":[]}')
  })
})

t.test('$type', async (t) => {
  t.test('is required and must be a non-empty string', async (t) => {
    for (const body of [
      '{}',
      '{"text":"hi"}',
      '{"$type":""}',
      '{"$type":"   "}',
      '{"$type":5}',
      '{"$type":null}',
      '{"$type":["x"]}',
      '{"$type":{}}',
      '{"$type":true}',
    ])
      refuses(t, () => parse(body), 'invalid_request', undefined, /\$type/)
  })
  t.test('is trimmed and keeps its case', async (t) => {
    t.equal(obj({ $type: '  Offer ' }).type, 'Offer')
  })
  t.test('may be 128 characters, not 129', async (t) => {
    t.equal(obj({ $type: 'x'.repeat(128) }).type, 'x'.repeat(128))
    refuses(t, () => obj({ $type: 'x'.repeat(129) }), 'invalid_request', { maxLength: 128 })
    t.equal(obj({ $type: '🔥'.repeat(128) }).type, '🔥'.repeat(128), 'characters, not UTF-16 units')
  })
})

t.test('$tags', async (t) => {
  t.test('are trimmed, lower-cased, with empty strings and duplicates dropped', async (t) => {
    t.same(obj({ $type: 'x', $tags: [' A ', 'a', '', '   ', 'B', 'b '] }).tags, ['a', 'b'])
  })
  t.test('may be omitted or null', async (t) => {
    t.same(obj({ $type: 'x' }).tags, [])
    t.same(obj({ $type: 'x', $tags: null }).tags, [])
    t.same(obj({ $type: 'x', $tags: [] }).tags, [])
  })
  t.test('up to 16 are accepted', async (t) => {
    const tags = Array.from({ length: 16 }, (_, i) => `t${i}`)
    t.same(obj({ $type: 'x', $tags: tags }).tags, tags)
  })
  t.test('more than 16 is invalid_request naming the limit', async (t) => {
    const tags = Array.from({ length: 17 }, (_, i) => `t${i}`)
    refuses(t, () => obj({ $type: 'x', $tags: tags }), 'invalid_request', { maxTags: 16 }, /16/)
  })
  t.test('a tag of 64 characters is accepted, 65 is invalid_request naming the limit', async (t) => {
    t.same(obj({ $type: 'x', $tags: ['a'.repeat(64)] }).tags, ['a'.repeat(64)])
    refuses(t, () => obj({ $type: 'x', $tags: ['a'.repeat(65)] }), 'invalid_request', { maxTagLength: 64 }, /64/)
  })
  t.test('a tag of 64 characters outside the BMP is accepted (characters, not UTF-16 units)', async (t) => {
    const tag = '🔥'.repeat(64)
    t.same(obj({ $type: 'x', $tags: [tag] }).tags, [tag])
    refuses(t, () => obj({ $type: 'x', $tags: ['🔥'.repeat(65)] }), 'invalid_request', { maxTagLength: 64 })
  })
  t.test('the length limit applies after trimming', async (t) => {
    t.same(obj({ $type: 'x', $tags: [`  ${'a'.repeat(64)}  `] }).tags, ['a'.repeat(64)])
  })
  t.test('non-string tags and non-array $tags are invalid_request', async (t) => {
    for (const tags of [[1], [null], [['a']], [{}], ['a', 2], 'news', 5, {}, true])
      refuses(t, () => obj({ $type: 'x', $tags: tags }), 'invalid_request', undefined, /\$tags/)
  })
})

t.test('$ttl', async (t) => {
  t.test('absent or null takes the default', async (t) => {
    t.equal(obj({ $type: 'x' }).ttl, DEFAULT_TTL)
    t.equal(obj({ $type: 'x', $ttl: null }).ttl, DEFAULT_TTL)
    t.equal(parseEnvelope('{"$type":"x"}', 600).ttl, 600)
  })
  t.test('accepts integers from 10 to 86400', async (t) => {
    for (const ttl of [10, 11, 3600, 86399, 86400]) t.equal(obj({ $type: 'x', $ttl: ttl }).ttl, ttl)
    t.equal(parse('{"$type":"x","$ttl":10.0}').ttl, 10)
  })
  t.test('anything else is invalid_request with the bounds', async (t) => {
    for (const ttl of [9, 0, -1, 86401, 10.5, '60', true, [60], { s: 60 }, 1e12])
      refuses(t, () => obj({ $type: 'x', $ttl: ttl }), 'invalid_request', { ttlMin: 10, ttlMax: 86400 })
    refuses(t, () => parse('{"$type":"x","$ttl":1e400}'), 'invalid_request')
  })
})

t.test('$refId', async (t) => {
  t.test('is kept as sent, trimmed, for the writer to resolve', async (t) => {
    t.equal(obj({ $type: 'reply', $refId: ' sw://h/signals/AAAAAAAAAAAAAAAAAAAA ' }).ref, 'sw://h/signals/AAAAAAAAAAAAAAAAAAAA')
    t.equal(obj({ $type: 'broadcast', $refId: 'AAAAAAAAAAAAAAAAAAAA' }).ref, 'AAAAAAAAAAAAAAAAAAAA')
    t.equal(obj({ $type: 'broadcast' }).ref, null)
  })
  t.test('must be a string', async (t) => {
    for (const ref of [5, true, ['x'], { id: 'x' }]) refuses(t, () => obj({ $type: 'broadcast', $refId: ref }), 'invalid_request')
  })
  t.test('a reply without one is reply_requires_ref', async (t) => {
    for (const body of [
      '{"$type":"reply"}',
      '{"$type":"reply","$refId":""}',
      '{"$type":"reply","$refId":"  "}',
      '{"$type":"reply","$refId":null}',
    ])
      refuses(t, () => parse(body), 'reply_requires_ref')
    refuses(t, () => parse('{"$type":" reply "}'), 'reply_requires_ref')
  })
})

t.test('payload size', async (t) => {
  // {"$type":"x","t":"<n chars>","$tags":[]} is 32 bytes of frame around the text
  const frame = Buffer.byteLength('{"$type":"x","t":"","$tags":[]}')
  t.test('16384 bytes are accepted', async (t) => {
    const env = obj({ $type: 'x', t: 'a'.repeat(16384 - frame) })
    t.equal(Buffer.byteLength(env.payloadText), 16384)
  })
  t.test('16385 bytes are payload_too_large with details', async (t) => {
    refuses(t, () => obj({ $type: 'x', t: 'a'.repeat(16385 - frame) }), 'payload_too_large', {
      maxPayloadBytes: 16384,
      payloadBytes: 16385,
    })
  })
  t.test('bytes are counted in UTF-8, not characters', async (t) => {
    // 'é' is one UTF-16 unit and two UTF-8 bytes: 9000 characters, 18000 bytes
    refuses(t, () => obj({ $type: 'x', t: 'é'.repeat(9000) }), 'payload_too_large', { payloadBytes: 18000 + frame })
  })
  t.test('$ttl and $refId do not count; normalised $tags do', async (t) => {
    const text = 'a'.repeat(16384 - frame)
    const env = parse(`{"$type":"x","$ttl":   60,"$refId":"${'B'.repeat(20)}","t":"${text}"}`)
    t.equal(Buffer.byteLength(env.payloadText), 16384)
    refuses(t, () => parse(`{"$type":"x","t":"${text}","$tags":["a"]}`), 'payload_too_large', { payloadBytes: 16384 + 3 })
  })
})

t.test('the envelope checks run in order: invalid_request, payload_too_large, reply_requires_ref', async (t) => {
  const big = 'a'.repeat(20000)
  refuses(t, () => obj({ $type: 'x', $ttl: 5, t: big }), 'invalid_request')
  refuses(t, () => obj({ $type: 'x', $tags: [1], t: big }), 'invalid_request')
  refuses(t, () => obj({ $type: 'reply', t: big }), 'payload_too_large')
})

t.test('the body must be one storable JSON object', async (t) => {
  t.test('not JSON is invalid_request', async (t) => {
    for (const body of ['', ' ', '{', '{"$type":"x"', "{'$type':'x'}", '{"$type":"x"} extra', 'nope', '\ufeff{"$type":"x"}'])
      refuses(t, () => parse(body), 'invalid_request')
  })
  t.test('not an object is invalid_request', async (t) => {
    for (const body of ['[]', '[{"$type":"x"}]', '"x"', 'null', '5', 'true'])
      refuses(t, () => parse(body), 'invalid_request', undefined, /object/)
  })
  t.test('nesting deeper than 32 is invalid_request; 32 is fine', async (t) => {
    const levels = (n: number) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`
    t.ok(parseRawObject(`{"$type":"x","d":${levels(31)}}`), 'the root plus 31 levels is 32')
    refuses(t, () => parse(`{"$type":"x","d":${levels(32)}}`), 'invalid_request', undefined, /32/)
    refuses(t, () => parse(`{"$type":"x","d":${'['.repeat(32)}${']'.repeat(32)}}`), 'invalid_request', undefined, /32/)
    refuses(t, () => parse(`{"$type":"x","d":${'['.repeat(30000)}${']'.repeat(30000)}}`), 'invalid_request')
  })
  t.test('__proto__, constructor and prototype keys are invalid_request at any depth', async (t) => {
    for (const body of [
      '{"$type":"x","__proto__":{"admin":true}}',
      '{"$type":"x","a":{"__proto__":{"admin":true}}}',
      '{"$type":"x","a":[{"constructor":{"prototype":{}}}]}',
      '{"$type":"x","constructor":1}',
      '{"$type":"x","a":{"b":{"prototype":1}}}',
    ])
      refuses(t, () => parse(body), 'invalid_request')
  })
  t.test('NUL characters in values or keys are invalid_request', async (t) => {
    for (const body of [
      '{"$type":"x","t":"a\\u0000b"}',
      '{"$type":"x","a\\u0000":1}',
      '{"$type":"x\\u0000"}',
      '{"$type":"x","$tags":["a\\u0000"]}',
      '{"$type":"x","a":{"b\\u0000":[1]}}',
    ])
      refuses(t, () => parse(body), 'invalid_request', undefined, /NUL/)
  })
  t.test('lone surrogates are invalid_request; a valid pair is kept', async (t) => {
    for (const body of [
      '{"$type":"x","t":"\\ud800"}',
      '{"$type":"x","t":"\\udc00x"}',
      '{"$type":"x","\\ud800":1}',
      '{"$type":"\\ud83d"}',
      '{"$type":"x","a":["\\udfff"]}',
    ])
      refuses(t, () => parse(body), 'invalid_request', undefined, /surrogate/)
    t.equal(parse('{"$type":"x","t":"\\ud83d\\udd25"}').payloadText, '{"$type":"x","t":"\\ud83d\\udd25","$tags":[]}')
  })
  t.test('a lone surrogate in the text itself, not escaped, is invalid_request too; a raw pair is kept', async (t) => {
    // the JSON text a string of another surface may be (MCP arguments, A2A parts): not UTF-8 decoded
    for (const body of ['{"$type":"x","t":"\ud800"}', '{"$type":"x","\udc00":1}', '{"$type":"x","a":[{"b":"z\udbff"}]}'])
      refuses(t, () => parse(body), 'invalid_request', undefined, /surrogate/)
    t.equal(parse('{"$type":"x","t":"\ud83d\udd25"}').payloadText, '{"$type":"x","t":"\ud83d\udd25","$tags":[]}')
  })
  t.test('numbers that overflow are invalid_request', async (t) => {
    for (const body of ['{"$type":"x","n":1e400}', '{"$type":"x","n":-1e400}', '{"$type":"x","a":[1,{"n":1e999}]}'])
      refuses(t, () => parse(body), 'invalid_request')
  })
  t.test('duplicate top-level keys are invalid_request', async (t) => {
    refuses(t, () => parse('{"$type":"x","a":1,"a":2}'), 'invalid_request', undefined, /duplicate/)
    refuses(t, () => parse('{"$type":"x","$type":"y"}'), 'invalid_request', undefined, /duplicate/)
    // the same name written once plainly and once escaped is the same key
    refuses(t, () => parse('{"$type":"x","a":1,"\\u0061":2}'), 'invalid_request', undefined, /duplicate key "a"/)
    // a member's value holding the name again is no duplicate
    t.equal(parse('{"$type":"x","a":{"a":1},"b":"a"}').payloadText, '{"$type":"x","a":{"a":1},"b":"a","$tags":[]}')
  })
})

t.test('signal ids', async (t) => {
  t.test('are 20 characters from [0-9A-Za-z] and do not repeat', async (t) => {
    const ids = new Set(Array.from({ length: 2000 }, newSignalId))
    t.equal(ids.size, 2000)
    for (const id of ids) if (!/^[0-9A-Za-z]{20}$/.test(id)) t.fail(`bad id ${id}`)
    const chars = new Set([...ids].join(''))
    t.ok(chars.size > 55, 'the whole alphabet is used')
  })
  t.test('every character of the alphabet is equally likely, in every position', async (t) => {
    // 62 characters x 20 positions; 31,000 ids give each (character, position) 500 draws on average. A
    // character drawn from a random byte modulo 62 (0-7 a quarter more likely) or a 6-bit value
    // folded back (0 and 1 twice as likely) is far outside these bounds
    const n = 31_000
    const counts = Array.from({ length: 20 }, () => new Map<string, number>())
    for (let i = 0; i < n; i++) [...newSignalId()].forEach((c, p) => void counts[p]!.set(c, (counts[p]!.get(c) ?? 0) + 1))
    let chi = 0
    for (const byChar of counts) {
      t.equal(byChar.size, 62, 'all 62 characters appear')
      for (const c of byChar.values()) chi += (c - n / 62) ** 2 / (n / 62)
    }
    // chi-square with 20 x 61 = 1,220 degrees of freedom: mean 1,220, standard deviation ~49
    t.ok(chi < 1220 + 6 * 49, `chi-square ${Math.round(chi)} within six deviations of uniform`)
  })
  t.test('isSignalId accepts exactly that shape', async (t) => {
    t.ok(isSignalId('aZ09aZ09aZ09aZ09aZ09'))
    for (const s of ['', 'a'.repeat(19), 'a'.repeat(21), `${'a'.repeat(19)}-`, `${'a'.repeat(19)}é`, ` ${'a'.repeat(20)}`])
      t.notOk(isSignalId(s), s)
  })
  t.test('a raw id or a sw:// URI of this board is resolved to the id', async (t) => {
    const id = 'AbCdEfGhIjKlMnOpQrSt'
    t.equal(parseSignalRef(id, 'board.example:443'), id)
    t.equal(parseSignalRef(` ${id} `, 'board.example:443'), id)
    t.equal(parseSignalRef(`sw://board.example:443/signals/${id}`, 'board.example:443'), id)
    t.equal(parseSignalRef(`sw://BOARD.Example:443/signals/${id}`, 'board.example:443'), id, 'the authority is case-insensitive')
  })
  t.test('a URI of another board is invalid_request', async (t) => {
    refuses(
      t,
      () => parseSignalRef('sw://other.example/signals/AbCdEfGhIjKlMnOpQrSt', 'board.example'),
      'invalid_request',
      undefined,
      /another board/,
    )
    refuses(t, () => parseSignalRef('sw://board.example:444/signals/AbCdEfGhIjKlMnOpQrSt', 'board.example:443'), 'invalid_request')
  })
  t.test('anything else is invalid_request', async (t) => {
    for (const ref of [
      'hello',
      'AbCdEfGhIjKlMnOpQrS',
      'sw://board.example/signals/short',
      'sw://board.example/identities/AbCdEfGhIjKlMnOpQrSt',
      'https://board.example/signals/AbCdEfGhIjKlMnOpQrSt',
      'sw://board.example/signals/AbCdEfGhIjKlMnOpQrSt/x',
      '',
    ])
      refuses(t, () => parseSignalRef(ref, 'board.example'), 'invalid_request')
  })
})

t.test('the limits are the spec values', async (t) => {
  t.match(LIMITS, {
    ttlMin: 10,
    ttlMax: 86400,
    maxPayloadBytes: 16384,
    maxLimit: 100,
    maxTags: 16,
    maxTagLength: 64,
    maxWaitSeconds: 25,
    maxBodyBytes: 65536,
    minLocalTokenLength: 8,
  })
})
