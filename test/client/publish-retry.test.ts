import t from 'tap'
import {
  newIdempotencyKey,
  publishRetryDelay,
  PUBLISH_RETRY_DEFAULTS,
  WireClient,
  WireError,
  type FetchLike,
} from '../../client/src/index.js'
import { startListening } from '../agents/listen.js'
import { until } from '../helpers/wait.js'

// A board that sheds load (503) or rate-limits (429) says when to come back (Retry-After); the
// client's publish comes back then, within bounds, with one Idempotency-Key for every try, so the
// signal is stored once however many tries reach the board.

const TOKEN = 'retry-agent-token'

/** The global fetch, recording each publish's status and Idempotency-Key (what went over the wire). */
function recordingFetch() {
  const tries: Array<{ status: number; key: string | null }> = []
  const f: FetchLike = async (input, init) => {
    const res = await fetch(input, init)
    if (init.method === 'POST') tries.push({ status: res.status, key: new Headers(init.headers).get('idempotency-key') })
    return res
  }
  return { f, tries }
}

t.test('a publish refused 429 with Retry-After is tried again then, with the same key, and stored once', async (t) => {
  const { s, url } = await startListening(t, {
    noRedis: true,
    env: { PUBLISH_RATE_LIMIT_MAX: '1', PUBLISH_RATE_LIMIT_WINDOW_MS: '1000', SHED_EVENT_LOOP_DELAY_MS: '0' },
  })
  const { f, tries } = recordingFetch()
  const wire = new WireClient({ url, token: TOKEN, fetch: f })
  await wire.publish({ $type: 'broadcast', n: 1 })
  const second = await wire.publish({ $type: 'broadcast', n: 2 }) // the window's one publish is spent
  t.equal(second.ok, true)
  t.same(tries.map((x) => x.status).slice(1, 2), [429], 'the second publish was refused first')
  t.equal(tries.at(-1)!.status, 200, 'then accepted')
  const keys = tries.slice(1).map((x) => x.key)
  t.ok(keys[0] && keys.every((k) => k === keys[0]), 'every try of it carried the one key the client made')
  t.not(tries[0]!.key, keys[0], 'each publish its own key')
  const feed = (await s.read('limit=100')).signals.map((x: { payload: { n: number } }) => x.payload.n)
  t.same(feed, [1, 2], 'each stored once')
})

t.test("a caller's own Idempotency-Key is the one every try carries", async (t) => {
  const { url } = await startListening(t, {
    noRedis: true,
    env: { PUBLISH_RATE_LIMIT_MAX: '1', PUBLISH_RATE_LIMIT_WINDOW_MS: '1000', SHED_EVENT_LOOP_DELAY_MS: '0' },
  })
  const { f, tries } = recordingFetch()
  const wire = new WireClient({ url, token: TOKEN, fetch: f })
  await wire.publish({ $type: 'broadcast' })
  await wire.publish({ $type: 'broadcast' }, { idempotencyKey: 'mine-1' })
  t.ok(tries.length >= 3)
  t.same(new Set(tries.slice(1).map((x) => x.key)), new Set(['mine-1']))
})

t.test('a board that keeps shedding: the publish gives up within its bounds, with the 503, and nothing is stored', async (t) => {
  // shedding on heap use: every publish is refused 503 with Retry-After, the process otherwise well
  const { s, url } = await startListening(t, { noRedis: true, env: { SHED_HEAP_USED_RATIO: '0.000001', SHED_EVENT_LOOP_DELAY_MS: '0' } })
  await until(
    async () => (await s.app.inject({ url: '/sw/signals' })).statusCode === 503,
    30_000,
    'the board to shed (its first heap sample)',
  )
  const { f, tries } = recordingFetch()
  const wire = new WireClient({ url, token: TOKEN, fetch: f, publishRetry: { maxAttempts: 3, maxTotalMs: 60_000 } })
  const err = await wire.publish({ $type: 'broadcast' }).catch((e: unknown) => e)
  t.ok(err instanceof WireError)
  t.match(err, { status: 503, code: 'unavailable' })
  t.ok((err as WireError).retryAfter! >= 1, 'the board said when')
  t.equal(tries.length, 3, 'three tries, as asked')
  t.ok(tries.every((x) => x.status === 503 && x.key === tries[0]!.key))
  t.same((await s.infra.primary.query(`select 1 from "${s.schema}".signals`)).rows, [], 'nothing was stored')

  // a total time shorter than the board's Retry-After: one try only
  const short = recordingFetch()
  const quick = new WireClient({ url, token: TOKEN, fetch: short.f, publishRetry: { maxTotalMs: 500 } })
  t.match(await quick.publish({ $type: 'broadcast' }).catch((e: unknown) => e), { status: 503 })
  t.equal(short.tries.length, 1, 'no wait past maxTotalMs')

  // publishRetry: false: one try, and no key of the client's own
  const off = recordingFetch()
  const once = new WireClient({ url, token: TOKEN, fetch: off.f, publishRetry: false })
  t.match(await once.publish({ $type: 'broadcast' }).catch((e: unknown) => e), { status: 503 })
  t.same(off.tries, [{ status: 503, key: null }])
})

t.test('what is tried again, and for how long', async (t) => {
  const o = PUBLISH_RETRY_DEFAULTS
  const e = (status: number, retryAfter?: number) =>
    new WireError(
      status === 429 ? 'rate_limited' : 'unavailable',
      status,
      'x',
      undefined,
      retryAfter === undefined ? undefined : { retryAfter },
    )
  const mid = () => 0.5
  t.equal(publishRetryDelay(e(503, 2), 1, o, 0, 0, mid), 2100, 'Retry-After plus up to 10 %')
  t.equal(
    publishRetryDelay(e(429, 1), 1, o, 0, 0, () => 0),
    1000,
  )
  t.equal(publishRetryDelay(e(503), 1, o, 0, 0), undefined, 'no Retry-After: the board did not say when')
  t.equal(publishRetryDelay(e(500, 1), 1, o, 0, 0), undefined, 'a 500 is not a refusal to come back from')
  t.equal(publishRetryDelay(e(400, 1), 1, o, 0, 0), undefined)
  t.equal(publishRetryDelay(new Error('x'), 1, o, 0, 0), undefined)
  t.equal(publishRetryDelay(e(503, 1), o.maxAttempts, o, 0, 0), undefined, 'no try past maxAttempts')
  t.equal(
    publishRetryDelay(e(503, 5), 1, o, 0, o.maxTotalMs - 4000, () => 0),
    undefined,
    'no wait ending past maxTotalMs',
  )
  t.equal(
    publishRetryDelay(e(503, 5), 1, o, 0, o.maxTotalMs - 5000, () => 0),
    5000,
  )
  t.match(newIdempotencyKey(), /^[0-9a-f]{32}$/)
  t.not(newIdempotencyKey(), newIdempotencyKey())
})
