import t, { type Test } from 'tap'
import {
  matchesFilter,
  PAGE_SOURCE_NAMES,
  parseReadQuery,
  parseSince,
  READ_FILTERS,
  servedBy,
  WireError,
  type ReadFilter,
  type Signal,
} from '../../libs/shared/domain/index.js'

// Pure functions: GET /sw/signals parameters (docs/protocol.md "Reading") and the in-memory filter.

const NOW = Date.parse('2030-06-15T12:00:00.000Z')
const q = (raw: Record<string, unknown>) => parseReadQuery(raw, NOW, 'board.example')

function refuses(t: Test, raw: Record<string, unknown>, name?: string) {
  try {
    q(raw)
  } catch (err) {
    t.ok(err instanceof WireError && err.code === 'invalid_request', `${JSON.stringify(raw)} is invalid_request`)
    if (name) t.match((err as Error).message, name)
    return
  }
  t.fail(`${JSON.stringify(raw)} was accepted`)
}

t.test('no parameters: bootstrap page of 100, no wait, no filters', async (t) => {
  t.same(q({}), {
    cursor: null,
    limit: 100,
    waitMs: 0,
    type: null,
    origin: null,
    tags: [],
    q: null,
    sinceMs: null,
    includeExpired: false,
    refId: null,
  })
})

t.test('ref (a Wire extension) takes a signal id or an sw:// URI of this board', async (t) => {
  const id = 'Ab3dEf7hIj1lMn0pQr5t'
  t.equal(q({ ref: id }).refId, id)
  t.equal(q({ ref: `sw://board.example/signals/${id}` }).refId, id)
  t.equal(q({ ref: '' }).refId, null, 'empty means no filter')
  refuses(t, { ref: 'short' }, 'signal id')
  refuses(t, { ref: `sw://other.example/signals/${id}` }, 'another board')
  refuses(t, { ref: [id, id] }, 'once')
})

t.test('cursor', async (t) => {
  t.test('is a non-negative integer', async (t) => {
    t.equal(q({ cursor: '0' }).cursor, 0)
    t.equal(q({ cursor: '42' }).cursor, 42)
    t.equal(q({ cursor: '9007199254740991' }).cursor, Number.MAX_SAFE_INTEGER)
  })
  t.test(
    'empty is invalid_request, never "no cursor" (a follower whose cursor got lost must not restart at the newest page)',
    async (t) => {
      refuses(t, { cursor: '' }, 'cursor is empty')
      refuses(t, { cursor: '  ' }, 'cursor is empty')
      t.equal(q({}).cursor, null, 'leaving it out is the newest page')
    },
  )
  t.test('anything else is invalid_request', async (t) => {
    for (const cursor of [
      '-1',
      'abc',
      '1.5',
      '1e3',
      ' 1',
      '1 ',
      '0x10',
      '+1',
      '99999999999999999',
      '9007199254740993',
      'NaN',
      'Infinity',
      '１',
      ['1', '2'],
    ])
      refuses(t, { cursor }, 'cursor')
  })
})

t.test('limit', async (t) => {
  t.test('defaults to 100', async (t) => {
    t.equal(q({}).limit, 100)
    t.equal(q({ limit: '' }).limit, 100)
  })
  t.test('is clamped to 1..100', async (t) => {
    t.equal(q({ limit: '1' }).limit, 1)
    t.equal(q({ limit: '37' }).limit, 37)
    t.equal(q({ limit: '100' }).limit, 100)
    t.equal(q({ limit: '101' }).limit, 100)
    t.equal(q({ limit: '100000' }).limit, 100)
    t.equal(q({ limit: '0' }).limit, 1)
    t.equal(q({ limit: '-5' }).limit, 1)
  })
  t.test('non-numeric is invalid_request', async (t) => {
    for (const limit of ['abc', '1.5', '10x', '1e2', ' 5', ['5', '6']]) refuses(t, { limit }, 'limit')
  })
})

t.test('wait', async (t) => {
  t.test('is seconds, clamped to 0..25', async (t) => {
    t.equal(q({ wait: '5' }).waitMs, 5000)
    t.equal(q({ wait: '0.5' }).waitMs, 500)
    t.equal(q({ wait: '25' }).waitMs, 25000)
    t.equal(q({ wait: '26' }).waitMs, 25000)
    t.equal(q({ wait: '100000' }).waitMs, 25000)
    t.equal(q({ wait: '0' }).waitMs, 0)
    t.equal(q({ wait: '-3' }).waitMs, 0)
  })
  t.test('non-numeric is invalid_request', async (t) => {
    for (const wait of ['abc', '', '1e2', '5s', ' 5', 'Infinity', '.5', ['1', '2']]) refuses(t, { wait }, 'wait')
  })
})

t.test('type and origin', async (t) => {
  t.test('are exact, trimmed, and empty means no filter', async (t) => {
    t.match(q({ type: ' Offer ', origin: ' fp_abc ' }), { type: 'Offer', origin: 'fp_abc' })
    t.match(q({ type: '', origin: '   ' }), { type: null, origin: null })
  })
  t.test('given twice, too long, or with NUL or lone surrogates is invalid_request', async (t) => {
    for (const name of ['type', 'origin']) {
      refuses(t, { [name]: ['a', 'b'] }, name)
      refuses(t, { [name]: 'x'.repeat(1025) }, name)
      refuses(t, { [name]: 'a\u0000b' }, name)
      refuses(t, { [name]: 'a\ud800' }, name)
    }
  })
})

t.test('tag', async (t) => {
  t.test('one, several, or comma-separated, normalised like publish tags', async (t) => {
    t.same(q({ tag: 'News' }).tags, ['news'])
    t.same(q({ tag: ['a', 'B'] }).tags, ['a', 'b'])
    t.same(q({ tag: ' A , b,,c ' }).tags, ['a', 'b', 'c'])
    t.same(q({ tag: ['a,b', 'B', 'c'] }).tags, ['a', 'b', 'c'])
    t.same(q({ tag: '' }).tags, [])
    t.same(q({ tag: '🔥'.repeat(64) }).tags, ['🔥'.repeat(64)])
  })
  t.test('a tag over 64 characters, too many tags, or bad characters is invalid_request', async (t) => {
    refuses(t, { tag: 'a'.repeat(65) }, '64')
    refuses(t, { tag: Array.from({ length: 65 }, (_, i) => `t${i}`) })
    refuses(t, { tag: 'x'.repeat(1025) })
    refuses(t, { tag: 'a\u0000' })
    refuses(t, { tag: ['ok', '\udc00'] })
  })
})

t.test('q', async (t) => {
  t.test('is trimmed and lower-cased; empty means no filter', async (t) => {
    t.equal(q({ q: '  Hello World ' }).q, 'hello world')
    t.equal(q({ q: '100%_done' }).q, '100%_done')
    t.equal(q({ q: '   ' }).q, null)
  })
  t.test('too long, twice, or with NUL or lone surrogates is invalid_request', async (t) => {
    refuses(t, { q: 'x'.repeat(1025) })
    refuses(t, { q: ['a', 'b'] })
    refuses(t, { q: 'a\u0000' })
    refuses(t, { q: '\ud800' })
  })
})

t.test('since', async (t) => {
  t.test('accepts ISO 8601 timestamps', async (t) => {
    t.equal(q({ since: '2030-06-15T11:00:00Z' }).sinceMs, Date.parse('2030-06-15T11:00:00Z'))
    t.equal(q({ since: '2030-06-15T11:00:00.123Z' }).sinceMs, Date.parse('2030-06-15T11:00:00.123Z'))
    t.equal(q({ since: '2030-06-15T13:00:00+02:00' }).sinceMs, Date.parse('2030-06-15T11:00:00Z'))
    t.equal(q({ since: '2030-06-15' }).sinceMs, Date.parse('2030-06-15T00:00:00Z'))
  })
  t.test('accepts Unix seconds, fractional too', async (t) => {
    t.equal(q({ since: '1700000000' }).sinceMs, 1700000000000)
    t.equal(q({ since: '1700000000.5' }).sinceMs, 1700000000500)
    t.equal(q({ since: '0' }).sinceMs, 0)
  })
  t.test('accepts durations back from now', async (t) => {
    t.equal(q({ since: '90s' }).sinceMs, NOW - 90_000)
    t.equal(q({ since: '15m' }).sinceMs, NOW - 15 * 60_000)
    t.equal(q({ since: '2h' }).sinceMs, NOW - 2 * 3_600_000)
    t.equal(q({ since: '1d' }).sinceMs, NOW - 86_400_000)
    t.equal(parseSince('30s', 1_000_000), 970_000)
  })
  t.test('empty means no filter', async (t) => {
    t.equal(q({ since: '' }).sinceMs, null)
  })
  t.test('an instant before the Unix epoch means everything (the epoch)', async (t) => {
    t.equal(q({ since: '999999999d' }).sinceMs, 0)
    t.equal(q({ since: '0000-01-01T00:00:00Z' }).sinceMs, 0)
    t.equal(q({ since: '1969-12-31T23:59:59Z' }).sinceMs, 0)
  })
  t.test('anything else is invalid_request', async (t) => {
    for (const since of [
      'yesterday',
      '15x',
      '1w',
      '-5',
      '-5m',
      'm',
      '2030-13-45',
      '2030-06-15T25:00:00Z',
      '30/06/2030',
      'now',
      'NaN',
      '1e9',
      '0x10',
      ['1h', '2h'],
    ])
      refuses(t, { since }, 'since')
  })
})

t.test('includeExpired', async (t) => {
  t.equal(q({ includeExpired: '1' }).includeExpired, true)
  t.equal(q({ includeExpired: 'true' }).includeExpired, true)
  t.equal(q({ includeExpired: '0' }).includeExpired, false)
  t.equal(q({ includeExpired: 'false' }).includeExpired, false)
  for (const includeExpired of ['yes', '2', '', 'TRUE', ['1', '1']]) refuses(t, { includeExpired }, 'includeExpired')
})

t.test('unknown parameters are ignored', async (t) => {
  t.same(q({ foo: 'bar', channel: ['a', 'b'] }), q({}))
})

t.test('the in-memory filter', async (t) => {
  const base: Signal = {
    seq: 1,
    id: 'AAAAAAAAAAAAAAAAAAAA',
    origin: 'fp_0123456789abcdef0123',
    originName: null,
    originUri: 'sw://h/identities/fp_0123456789abcdef0123',
    originVerified: true,
    type: 'offer',
    tags: ['gpu', 'ops'],
    payloadText: '{"$type":"offer","text":"100% Done_Now","$tags":["gpu","ops"]}',
    ttl: 60,
    pinned: false,
    refId: null,
    createdAtMs: NOW - 30_000,
    expiresAtMs: NOW + 30_000,
  }
  const none: ReadFilter = { type: null, tags: [], origin: null, q: null, sinceMs: null, includeExpired: false, refId: null }
  const f = (o: Partial<ReadFilter>) => ({ ...none, ...o })

  t.test('matches everything active with no filter', async (t) => {
    t.ok(matchesFilter(base, none, NOW))
  })
  t.test('ref matches direct replies only', async (t) => {
    t.notOk(matchesFilter(base, f({ refId: 'Ab3dEf7hIj1lMn0pQr5t' }), NOW), 'not a reply')
    t.ok(matchesFilter({ ...base, refId: 'Ab3dEf7hIj1lMn0pQr5t' }, f({ refId: 'Ab3dEf7hIj1lMn0pQr5t' }), NOW))
  })
  t.test('type and origin match exactly', async (t) => {
    t.ok(matchesFilter(base, f({ type: 'offer' }), NOW))
    t.notOk(matchesFilter(base, f({ type: 'Offer' }), NOW))
    t.notOk(matchesFilter(base, f({ type: 'off' }), NOW))
    t.ok(matchesFilter(base, f({ origin: base.origin }), NOW))
    t.notOk(matchesFilter(base, f({ origin: 'fp_0123' }), NOW))
  })
  t.test('tags match with OR', async (t) => {
    t.ok(matchesFilter(base, f({ tags: ['nope', 'ops'] }), NOW))
    t.notOk(matchesFilter(base, f({ tags: ['nope', 'gp'] }), NOW))
  })
  t.test('q is a case-insensitive substring with literal % and _', async (t) => {
    t.ok(matchesFilter(base, f({ q: '100% done_now' }), NOW))
    t.ok(matchesFilter(base, f({ q: '%' }), NOW))
    t.notOk(matchesFilter(base, f({ q: '100%now' }), NOW))
    t.notOk(matchesFilter(base, f({ q: 'done%now' }), NOW), '% is not a wildcard')
    t.notOk(matchesFilter(base, f({ q: 'd_ne' }), NOW), '_ is not a wildcard')
    t.ok(matchesFilter(base, f({ q: 'gpu' }), NOW), 'tags are searched')
    t.ok(matchesFilter(base, f({ q: '0123456789abcdef' }), NOW), 'the origin is searched')
  })
  t.test('since is strictly after', async (t) => {
    t.ok(matchesFilter(base, f({ sinceMs: base.createdAtMs - 1 }), NOW))
    t.notOk(matchesFilter(base, f({ sinceMs: base.createdAtMs }), NOW))
  })
  t.test('expired signals only with includeExpired; pinned ones always', async (t) => {
    const expired = { ...base, expiresAtMs: NOW }
    t.notOk(matchesFilter(expired, none, NOW))
    t.ok(matchesFilter(expired, f({ includeExpired: true }), NOW))
    t.ok(matchesFilter({ ...expired, pinned: true }, none, NOW))
  })
})

t.test('which page sources serve a filter comes from READ_FILTERS, not a list kept by hand', async (t) => {
  // one value that sets each filter (a new filter without one here fails the next check)
  const setting: Record<string, Record<string, unknown>> = {
    type: { type: 'reply' },
    tags: { tag: 'ops' },
    origin: { origin: 'fp_0123456789abcdef0123' },
    q: { q: 'review' },
    sinceMs: { since: '2030-06-15T11:00:00Z' },
    includeExpired: { includeExpired: 'true' },
    refId: { ref: 'abcdefghijABCDEFGHIJ' },
  }
  t.same(READ_FILTERS.map((f) => f.key).sort(), Object.keys(setting).sort(), 'every filter is set once below')
  for (const source of PAGE_SOURCE_NAMES) {
    const serves = servedBy(source)
    t.ok(serves(q({})), `${source} serves an unfiltered read`)
    for (const f of READ_FILTERS) {
      const read = q(setting[f.key]!)
      t.ok((f.set as (v: unknown) => boolean)(read[f.key]), `${f.param} is set by ${JSON.stringify(setting[f.key])}`)
      t.equal(
        serves(read),
        f.sources[source],
        `${f.param}: ${source} ${f.sources[source] ? 'serves' : 'does not serve'} it, as its row says`,
      )
    }
  }
  t.same(
    READ_FILTERS.filter((f) => f.sources.chunks).map((f) => f.key),
    ['tags', 'includeExpired'],
    'the chunk cache indexes tags and expiry only',
  )
  t.ok(
    READ_FILTERS.every((f) => f.sources.database),
    'the database, the source asked last, answers every filter',
  )
  t.ok(
    READ_FILTERS.every((f) => f.sources.tail),
    'the tail matches every filter in memory (one it could not would make each wake-up of its waiters a database read)',
  )
  for (const f of READ_FILTERS)
    t.same(Object.keys(f.sources).sort(), [...PAGE_SOURCE_NAMES].sort(), `${f.param} says for every source, and for no other`)
  t.throws(() => servedBy('redis' as never), /no column/, 'a source no filter has said anything about is refused')
})
