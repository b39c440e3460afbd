import t from 'tap'
import pg from 'pg'
import { fleetSchema, json, publish, startReplica, startRole, type Role } from '../helpers/fleet.js'
import { TEST_DATABASE_URL, TEST_REDIS_URL } from '../helpers/services.js'
import { until } from '../helpers/wait.js'

// The feed invariant across processes: 4 writer processes and 2 readers on a streaming replica,
// concurrent publishers, followers that keep only nextCursor (long-polling one reader, plain
// polling the other, and one that switches readers on every poll).

t.test('every follower sees every acknowledged signal, across 4 writers and 2 readers', async (t) => {
  const replica = await startReplica(t)
  const schema = fleetSchema(t)
  const env = { DATABASE_URL: TEST_DATABASE_URL, REDIS_URL: TEST_REDIS_URL, WIRE_PG_SCHEMA: schema, PUBLISH_RATE_LIMIT_MAX: '100000' }
  const first = await startRole(t, 'writer', env) // migrates
  const writers = [first, ...(await Promise.all([1, 2, 3].map(() => startRole(t, 'writer', { ...env, WIRE_AUTO_MIGRATE: '0' }))))]
  const readerEnv = { ...env, DATABASE_REPLICA_URL: replica.url }
  const readers = await Promise.all([startRole(t, 'reader', readerEnv), startRole(t, 'reader', readerEnv)])

  const acked: string[] = []
  // followers stop once their cursor reaches the last acknowledged seq (dense from 1 in a fresh schema)
  let target = Infinity
  let giveUpAt = Infinity
  let started = 0
  const follow = async (name: string, pick: (i: number) => Role, wait: number) => {
    let cursor = (await json(`${pick(0).url}/sw/signals?limit=1`)).nextCursor as number
    started++
    const seen: string[] = []
    let wentBack = 0
    for (let i = 1; ; i++) {
      const page = await json(`${pick(i).url}/sw/signals?cursor=${cursor}&limit=50&wait=${wait}`)
      if (page.nextCursor < cursor) wentBack++
      cursor = page.nextCursor
      for (const s of page.signals) seen.push(s.id)
      if (cursor >= target || Date.now() > giveUpAt) break
      if (!page.signals.length && !wait) await new Promise((r) => setTimeout(r, 10))
    }
    return { name, seen, wentBack }
  }
  const followers = [
    follow('long-poll on reader 1', () => readers[0]!, 2),
    follow('polling reader 2', () => readers[1]!, 0),
    follow('switching readers', (i) => readers[i % 2]!, 1),
  ]
  await until(() => started === followers.length, 10_000, 'every follower to hold its starting cursor before the first publish')

  const PUBLISHERS = 16
  const EACH = 25
  await Promise.all(
    Array.from({ length: PUBLISHERS }, async (_, p) => {
      for (let i = 0; i < EACH; i++) {
        const res = await publish(writers[(p + i) % writers.length]!, { $type: 'broadcast', p, i }, `publisher-${p}-token`)
        if (res.status === 200) acked.push(((await res.json()) as any).signal.id)
        else t.fail(`publish answered ${res.status}: ${(await res.text()).slice(0, 300)}`) // the error, for whoever reads a failure
      }
    }),
  )
  target = acked.length
  giveUpAt = Date.now() + 15_000
  const results = await Promise.all(followers)

  t.equal(acked.length, PUBLISHERS * EACH, 'every publish acknowledged')
  const c = new pg.Client({ connectionString: TEST_DATABASE_URL })
  await c.connect()
  const { rows } = await c.query<{ id: string; seq: string }>(`select id, seq from "${schema}".signals`)
  await c.end()
  const seqOf = new Map(rows.map((r) => [r.id, Number(r.seq)]))
  t.same(
    [...seqOf.values()].sort((a, b) => a - b),
    rows.map((_, i) => i + 1),
    'seq is dense across all writers',
  )
  for (const f of results) {
    t.equal(f.wentBack, 0, `${f.name}: nextCursor never went back`)
    t.equal(new Set(f.seen).size, f.seen.length, `${f.name}: no duplicates`)
    t.same([...f.seen].sort(), [...acked].sort(), `${f.name}: saw every acknowledged signal`)
    const order = f.seen.map((id) => seqOf.get(id)!)
    t.ok(
      order.every((q, i) => i === 0 || q > order[i - 1]!),
      `${f.name}: in seq order`,
    )
  }
})
