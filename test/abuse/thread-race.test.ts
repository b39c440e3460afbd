import t from 'tap'
import { startStack } from '../helpers/stack.js'
import { secondWriter } from './more-roles.js'

// The unverified thread limit holds across writers: one identity opening K threads at once through
// two writers on one database gets exactly the limit, not one per writer (the count and the insert
// share a per-origin advisory lock).

const LIMIT = 1
const K = 12
/** Every insert transaction stays open 30 ms after its rows are written, so the two writers' openings surely overlap. */
const slowCommits = (db: { query(sql: string): Promise<unknown> }, schema: string) =>
  db.query(`
    create function "${schema}".slow_commit() returns trigger language plpgsql as $$ begin perform pg_sleep(0.03); return null; end $$;
    create trigger slow_commit after insert on "${schema}".signals for each statement execute function "${schema}".slow_commit()`)

t.test('K concurrent thread openings through two writers: exactly the limit succeed', async (t) => {
  const s = await startStack(t, {
    env: { LOCAL_IDENTITY_VERIFIED: '0', UNVERIFIED_THREADS_PER_DAY: String(LIMIT), UNVERIFIED_RATE_LIMIT_MAX: '1000' },
    seed: async (infra, schema) => void (await slowCommits(infra.primary, schema)),
  })
  const other = await secondWriter(t, s)
  const token = 'race-unverified-token'
  const open = (i: number) =>
    (i % 2 ? other : s.app).inject({ method: 'POST', url: '/sw/signals', headers: s.bearer(token), payload: { $type: 'broadcast', i } })
  const res = await Promise.all(Array.from({ length: K }, (_, i) => open(i)))
  const codes = res.map((r) => r.statusCode)
  t.equal(codes.filter((c) => c === 200).length, LIMIT, `exactly ${LIMIT} threads opened: ${codes.join(',')}`)
  t.equal(codes.filter((c) => c === 403).length, K - LIMIT, 'the rest are refused')
  for (const r of res.filter((x) => x.statusCode === 403)) t.equal(r.json().error.code, 'unverified_limited')
  const stored = await s.infra.primary.query<{ n: number }>(`select count(*)::int as n from "${s.schema}".signals where ref_id is null`)
  t.equal(stored.rows[0]!.n, LIMIT, 'and exactly that many are stored')
  // replies are not threads: they still pass
  const root = res.find((r) => r.statusCode === 200)!.json().signal
  const reply = await other.inject({
    method: 'POST',
    url: '/sw/signals',
    headers: s.bearer(token),
    payload: { $type: 'reply', $refId: root.id },
  })
  t.equal(reply.statusCode, 200, 'a reply is not limited')
})

t.test('embedded: the same limit holds on PGlite', async (t) => {
  const s = await startStack(t, {
    noRedis: true,
    env: {
      DATABASE_URL: '',
      WIRE_DATA_DIR: 'memory://',
      LOCAL_IDENTITY_VERIFIED: '0',
      UNVERIFIED_THREADS_PER_DAY: String(LIMIT),
      UNVERIFIED_RATE_LIMIT_MAX: '1000',
    },
  })
  t.equal(s.infra.primary.kind, 'embedded')
  const res = await Promise.all(Array.from({ length: 6 }, (_, i) => s.publish({ $type: 'broadcast', i }, 'embedded-unverified')))
  t.equal(res.filter((r) => r.statusCode === 200).length, LIMIT)
  t.equal(res.filter((r) => r.statusCode === 403).length, 6 - LIMIT)
})
