import pg from 'pg'
import t, { type Test } from 'tap'
import { startFakeIdentity } from '../helpers/fake-identity.js'
import { tcpProxy } from '../helpers/fleet.js'
import { TEST_DATABASE_URL } from '../helpers/services.js'
import { startStack, type Stack } from '../helpers/stack.js'
import { until } from '../helpers/wait.js'

// One row the database refuses fails one publish (500: the envelope was valid, so the board is at
// fault, not the publisher), not the up to 500 in its group commit;
// identity-network names lose their control characters before they reach the database; and a
// lost connection says whether the signal may have been stored ("outcome unknown") or surely was
// not ("nothing was stored").

const publish = (s: Stack, body: unknown, token: string) =>
  s.app.inject({ method: 'POST', url: '/sw/signals', headers: s.bearer(token), payload: body as object })

/**
 * Holds commits in the database until released: a trigger in the test's schema waits for an
 * advisory lock this test holds, so the first batch stays uncommitted and the publishes sent
 * meanwhile go together in the next batch. No hook in Wire's code.
 */
async function commitGate(t: Test) {
  const key = 4_200_000 + Math.floor(Math.random() * 100_000)
  const holder = new pg.Client({ connectionString: TEST_DATABASE_URL })
  await holder.connect()
  await holder.query('select pg_advisory_lock($1)', [key])
  let released = false
  const release = async () => {
    if (released) return
    released = true
    await holder.query('select pg_advisory_unlock($1)', [key])
    await holder.end()
  }
  t.teardown(release)
  return {
    install: (db: { query(sql: string): Promise<unknown> }, schema: string) =>
      db.query(`
        create function "${schema}".gate() returns trigger language plpgsql as $$ begin perform pg_advisory_xact_lock(${key}); return null; end $$;
        create trigger gate after insert on "${schema}".signals for each statement execute function "${schema}".gate()`),
    /** A commit is waiting at the gate. */
    reached: () =>
      until(
        async () =>
          (await holder.query(`select count(*)::int as n from pg_locks where locktype = 'advisory' and objid = $1 and not granted`, [key]))
            .rows[0].n > 0,
      ),
    release,
  }
}

t.test('a row the database refuses fails its own publish only', async (t) => {
  const g = await commitGate(t)
  const s = await startStack(t, {
    env: { PUBLISH_RATE_LIMIT_MAX: '100000' },
    seed: async (infra, schema) => {
      // the stand-in for any row the database refuses: a check the envelope does not know about
      await infra.primary.query(`alter table "${schema}".signals add constraint no_poison check (type <> 'poison')`)
      await g.install(infra.primary, schema)
    },
  })
  const first = publish(s, { $type: 'broadcast', n: 0 }, 'batch-agent-0')
  await g.reached()
  const batch = Array.from({ length: 9 }, (_, i) =>
    publish(s, { $type: i === 4 ? 'poison' : 'broadcast', n: i + 1 }, `batch-agent-${i + 1}`),
  )
  // every publish is queued behind the held commit before it is released
  await until(() => s.writer.publisher.batcher.queued >= batch.length)
  await g.release()
  const res = await Promise.all([first, ...batch])
  t.same(
    res.map((r) => r.statusCode),
    [200, 200, 200, 200, 200, 500, 200, 200, 200, 200],
  )
  t.match(res[5]!.json().error, {
    code: 'internal',
    message: /the database refused this signal; nothing was stored/,
    details: { outcome: 'not_stored' },
  })
  t.ok(
    s.logs.some((l) => l.includes('retrying its signals one by one')),
    'the refused batch was retried row by row',
  )
  const feed = await s.read('limit=100')
  const acknowledged = res.filter((r) => r.statusCode === 200).map((r) => r.json().signal.id)
  t.same(
    feed.signals.map((x: { id: string }) => x.id).sort(),
    acknowledged.sort(),
    'every acknowledged signal is in the feed, nothing else',
  )
})

t.test('an identity-network display name with NUL and other controls is cleaned, in a batch with other publishes', async (t) => {
  const fake = await startFakeIdentity(t, {
    'nul-name-token': { identityId: 'id_nul', displayName: 'Ag\u0000ent\u0007 \u001b[31mRed\u007f\u0085' },
    'plain-token-1': { identityId: 'id_plain1' },
    'plain-token-2': { identityId: 'id_plain2' },
  })
  const s = await startStack(t, { env: { IDENTITY_URL: fake.url, PUBLISH_RATE_LIMIT_MAX: '100000' } })
  const res = await Promise.all(
    ['plain-token-1', 'nul-name-token', 'plain-token-2', 'nul-name-token'].map((tok, i) => publish(s, { $type: 'broadcast', i }, tok)),
  )
  t.same(
    res.map((r) => r.statusCode),
    [200, 200, 200, 200],
  )
  t.equal(res[1]!.json().signal.originName, 'Agent [31mRed')
  t.equal((await s.read()).signals.length, 4, 'all four stored')
})

t.test('a lost connection: "outcome unknown" when the statement was sent, "nothing was stored" when not', async (t) => {
  const proxy = await tcpProxy(t)
  const s = await startStack(t, {
    env: { DATABASE_URL: proxy.url },
    seed: async (infra, schema) =>
      void (await infra.primary.exec(`
        create function "${schema}".slow_insert() returns trigger language plpgsql as $$ begin perform pg_sleep(1); return new; end $$;
        create trigger slow_insert before insert on "${schema}".signals for each row when (new.type = 'slow') execute function "${schema}".slow_insert();`)),
  })
  const direct = new pg.Client({ connectionString: TEST_DATABASE_URL })
  await direct.connect()
  t.teardown(() => direct.end())

  const slow = publish(s, { $type: 'slow' }, 'lost-connection-agent')
  // wait until the insert is running on the server, then cut the connection under it
  const sleeping = `select 1 from pg_stat_activity where wait_event = 'PgSleep' and query like '%${s.schema}%signals%'`
  await until(async () => ((await direct.query(sleeping)).rowCount ?? 0) > 0, 5000, 'the insert running on the server')
  proxy.cut()
  const unknown = await slow
  t.equal(unknown.statusCode, 503)
  t.equal(unknown.json().error.code, 'unavailable')
  t.equal(unknown.json().error.details.outcome, 'unknown')
  t.match(unknown.json().error.message, /outcome unknown/)
  t.ok(unknown.headers['retry-after'])

  const refused = await publish(s, { $type: 'broadcast' }, 'lost-connection-agent')
  t.equal(refused.statusCode, 503)
  t.equal(refused.json().error.details.outcome, 'not_stored')
  t.match(refused.json().error.message, /nothing was stored/)

  // the server finished the statement the client gave up on: wait until no backend is running it
  const running = `select 1 from pg_stat_activity where state = 'active' and pid <> pg_backend_pid() and query like '%${s.schema}%signals%'`
  await until(async () => !(await direct.query(running)).rowCount, 5000, 'the statement to finish on the server')
  const stored = await direct.query(`select type from "${s.schema}".signals`)
  t.same(stored.rows, [{ type: 'slow' }], 'the "unknown" one was in fact stored; the "nothing" one was not')
  proxy.restore()
})
