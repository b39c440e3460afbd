import { AGGREGATOR_DRILLS, aggregatorBack } from './aggregator-drills.js'
import type { Host, NetFleet, RoleName } from './fleet.js'
import { agentClient } from './mcp.js'
import { pgQuery } from './proxy.js'
import type { Load } from './promise.js'
import { firstWarning, metric, readyz, WITHIN_MS, type Check, type Drill } from './runner.js'

// The network drills (docs/operations.md "The network drills"), one fault each, in the order they
// run on one fleet: each heals before the next begins. What each asserts besides the promise (its
// `meanwhile` and `after`) is what the fleet must keep doing around that fault.

/** The publish each fleet's stall drill leaves stalled: its answer, when it comes. */
const stalledThread = new WeakMap<NetFleet, Promise<number | string>>()

const cut = (a: Host, b: Host) => async (f: NetFleet) => (await f.hosts.cut(a, b), () => f.hosts.heal(a, b))
const down = (role: RoleName, name: string) => async (f: NetFleet) =>
  (await metric(f.roles[role], name)) === 0 ? `${role}: ${name} 0` : null
const notReady = (role: RoleName) => async (f: NetFleet) => {
  const s = await readyz(f.roles[role])
  return s === '200' ? null : `${role}: /readyz ${s}`
}
/** The first warning any role logged since the fault. */
const anyWarning = async (f: NetFleet, since: number) => {
  for (const [name, role] of Object.entries(f.roles)) {
    const line = firstWarning(role, since)
    if (line) return `${name}: ${line}`
  }
  return null
}

/** Followers' cursors move on (by `by` seqs, all together) while the fault holds. */
const followersMove = async (load: Load, check: (c: Check) => void, by = 20) => {
  const from = load.progress()
  check({ what: 'followers went on during the fault', ok: (await load.timeUntil(() => load.progress() >= from + by, WITHIN_MS)) !== null })
}
/** `n` publishes sent during the fault are acknowledged. */
const publishesAcked = async (load: Load, check: (c: Check) => void, n = 10) => {
  const at = load.now()
  const ok = await load.timeUntil(() => load.records.filter((r) => r.sent >= at && r.status === 200).length >= n, WITHIN_MS)
  check({ what: 'publishes acknowledged during the fault', ok: ok !== null })
}
/** The sweeper completes a job run after the fault, without a restart. */
const sweeperRuns = async (f: NetFleet, load: Load, check: (c: Check) => void) => {
  const before = await metric(f.roles.sweeper, 'wire_sweep_runs_total', 'outcome="complete"')
  const ok = await load.timeUntil(
    async () => (await metric(f.roles.sweeper, 'wire_sweep_runs_total', 'outcome="complete"')) > before,
    WITHIN_MS,
  )
  check({ what: 'the sweeper completed a job after the fault', ok: ok !== null })
}
/** The agents process publishes and reads (MCP) after the fault. */
const agentsServe = async (f: NetFleet, check: (c: Check) => void) => {
  const mcp = await agentClient(f.roles.agents.url, WITHIN_MS)
  try {
    let pub: { cursor: number; id: string } | string = 'not tried'
    for (const end = Date.now() + WITHIN_MS; Date.now() < end && typeof pub === 'string'; ) pub = await mcp.publish('after the fault')
    const read = typeof pub === 'string' ? pub : await mcp.read(pub.cursor - 1)
    const ok = typeof pub !== 'string' && typeof read !== 'string' && read.ids[0] === pub.id
    check({
      what: `the agents process published and read after the fault${ok ? '' : ` (${typeof read === 'string' ? read : 'not read back'})`}`,
      ok,
    })
  } finally {
    await mcp.close()
  }
}
const backAfterRestart = async (f: NetFleet, load: Load, check: (c: Check) => void) => {
  await sweeperRuns(f, load, check)
  await agentsServe(f, check)
  const listening = await load.timeUntil(async () => (await metric(f.roles.reader1, 'wire_pg_listen_up')) === 1, WITHIN_MS)
  check({ what: 'the readers listen on the primary again', ok: listening !== null })
  await aggregatorBack(f, load, check)
}

export const DRILLS: Drill[] = [
  {
    name: 'reader ↔ Redis cut',
    role: 'reader1',
    fault: cut('reader1', 'redis'),
    shows: down('reader1', 'wire_redis_up'),
    meanwhile: async (_f, load, check) => (await followersMove(load, check), await publishesAcked(load, check)),
  },
  {
    name: 'reader ↔ replica cut',
    role: 'reader1',
    fault: cut('reader1', 'replica'),
    shows: down('reader1', 'wire_replica_up'),
    meanwhile: async (_f, load, check) => followersMove(load, check),
  },
  {
    name: 'writer ↔ Redis cut',
    role: 'writer',
    fault: cut('writer', 'redis'),
    shows: down('writer', 'wire_redis_up'),
    meanwhile: async (_f, load, check) => (await publishesAcked(load, check), await followersMove(load, check)),
  },
  {
    name: 'writer ↔ primary stalled mid-transaction',
    role: 'writer',
    // an unverified identity's new thread is one transaction (count, insert, commit) holding
    // feed_head's lock from its insert: the link stalls when its `commit` is sent
    async fault(f) {
      f.writerLink.stallAt(pgQuery('commit'))
      const opener = fetch(`${f.roles.writer.url}/sw/signals`, {
        method: 'POST',
        headers: { authorization: 'Bearer drill-thread-opener', 'content-type': 'application/json' },
        body: JSON.stringify({ $type: 'broadcast', text: 'a new thread' }),
      }).then(
        (r) => r.status,
        () => 'network',
      )
      stalledThread.set(f, opener)
      return () => f.writerLink.pass()
    },
    shows: notReady('writer'),
    async meanwhile(f, load, check) {
      const status = await Promise.race([stalledThread.get(f)!, new Promise((r) => setTimeout(() => r('hung'), WITHIN_MS))])
      check({ what: `the stalled publish is answered, not left hanging (${status})`, ok: status === 503 })
      const at = load.now()
      const answered = await load.timeUntil(() => load.records.some((r) => r.sent >= at), WITHIN_MS)
      check({ what: 'publishes to the stalled writer are answered, not left hanging', ok: answered !== null })
      // the stalled transaction holds feed_head's lock on the primary: the agents process publishes once it is freed
      const mcp = await agentClient(f.roles.agents.url, WITHIN_MS)
      const pub = await mcp.publish('beside a stalled writer').finally(() => mcp.close())
      check({
        what: `the agents process publishes while the writer is stalled${typeof pub === 'string' ? ` (${pub})` : ''}`,
        ok: typeof pub !== 'string',
      })
    },
  },
  {
    name: 'replica streaming stopped',
    role: 'reader1',
    fault: cut('replica', 'pg'),
    shows: async (f) => ((await metric(f.roles.reader1, 'wire_replica_lag_signals')) > 0 ? 'reader1: wire_replica_lag_signals > 0' : null),
    meanwhile: async (_f, load, check) => followersMove(load, check),
  },
  {
    name: 'sweeper ↔ primary cut',
    role: 'sweeper',
    fault: cut('sweeper', 'pg'),
    shows: notReady('sweeper'),
    after: sweeperRuns,
  },
  {
    name: 'agents ↔ databases cut',
    role: 'agents',
    fault: async (f) => (
      await f.hosts.cut('agents', 'pg'),
      await f.hosts.cut('agents', 'replica'),
      async () => (await f.hosts.heal('agents', 'pg'), await f.hosts.heal('agents', 'replica'))
    ),
    shows: notReady('agents'),
    async meanwhile(f, _load, check) {
      const mcp = await agentClient(f.roles.agents.url, WITHIN_MS)
      const answer = await mcp.publish('to a cut-off agents process').finally(() => mcp.close())
      check({
        what: `an MCP publish to the cut-off agents process is answered${answer === 'hung' ? ' (hung)' : ''}`,
        ok: answer !== 'hung',
      })
    },
    after: async (f, _load, check) => agentsServe(f, check),
  },
  ...AGGREGATOR_DRILLS,
  {
    name: 'PostgreSQL restarted',
    role: 'writer',
    fault: async (f) => (await f.restartPrimary(), () => {}),
    shows: anyWarning,
    after: backAfterRestart,
  },
  {
    name: 'backends killed',
    role: 'writer',
    fault: async (f) => {
      for (const app of [
        'wire',
        'wire-reader',
        'wire-listen',
        'wire-sweeper',
        'wire-aggregator',
        'wire-aggregator-boss',
        'wire-aggregator-follow',
      ])
        await f.terminate(app)
      return () => {}
    },
    shows: anyWarning,
    after: backAfterRestart,
  },
  {
    name: 'Redis restarted',
    role: 'writer',
    fault: async (f) => (await f.stopRedis(), () => f.startRedis()),
    shows: down('writer', 'wire_redis_up'),
    meanwhile: async (_f, load, check) => (await publishesAcked(load, check), await followersMove(load, check)),
  },
  {
    name: 'reader ↔ replica slow (300 ms)',
    role: 'reader2',
    fault: async (f) => (f.replicaLink.delay(300), () => f.replicaLink.pass()),
    // nothing is expected to show: reads are slower, and a reader asks the primary for what its replica has not yet
    meanwhile: async (_f, load, check) => followersMove(load, check),
  },
]
