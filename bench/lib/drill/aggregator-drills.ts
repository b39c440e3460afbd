import { publishOn, searchFinds } from './aggregator.js'
import type { NetFleet } from './fleet.js'
import { PROXY_FOLLOWER, type Load } from './promise.js'
import { metric, readyz, WITHIN_MS, type Check, type Drill } from './runner.js'

// The aggregator's drills (docs/operations.md "The network drills"): its link to the primary cut,
// and a board it follows stalled. Besides the promise (its proxy's and its search's followers
// among the load's), each checks what the aggregator must keep doing: its pg-boss rechecks and its
// following resume without a restart, and a stalled board holds up no other.

/** The aggregator completes a recheck pass (its pg-boss job) after the fault, without a restart. */
const rechecksRun = async (f: NetFleet, load: Load, check: (c: Check) => void) => {
  const complete = () => metric(f.roles.aggregator, 'wire_aggregator_recheck_runs_total', 'outcome="complete"')
  const before = await complete()
  const ok = await load.timeUntil(async () => (await complete()) > before, WITHIN_MS)
  check({ what: 'the aggregator completed a recheck (pg-boss) after the fault', ok: ok !== null })
}

/** The aggregator follows the second board again: a signal published on it after the fault is found by the aggregator's search. */
const board2Followed = async (f: NetFleet, load: Load, check: (c: Check) => void) => {
  let id: string | null = null
  const found = await load.timeUntil(
    async () =>
      (id ??= await publishOn(f.roles.board2.url, 'after the fault')) !== null && searchFinds(f.roles.aggregator, f.board2Authority, id),
    WITHIN_MS,
  )
  check({ what: `the aggregator follows the second board again${id ? '' : ' (no publish on it)'}`, ok: found !== null })
}

/** After a database fault: rechecks and following resume, both boards followed (`wire_aggregator_boards_followed` 2). */
export const aggregatorBack = async (f: NetFleet, load: Load, check: (c: Check) => void) => {
  await rechecksRun(f, load, check)
  await board2Followed(f, load, check)
  const both = await load.timeUntil(async () => (await metric(f.roles.aggregator, 'wire_aggregator_boards_followed')) === 2, WITHIN_MS)
  check({ what: 'the aggregator follows both boards', ok: both !== null })
}

/** A publish made during the fault reaches every follower, those through the aggregator included; how long it took, in the check. */
const publishFollowed = async (load: Load, check: (c: Check) => void) => {
  const at = load.now()
  let took = 0
  const ok = await load.timeUntil(() => {
    const p = load.records.find((r) => r.sent >= at && r.status === 200)
    if (!p || !load.followersAt(p)) return false
    took = load.now() - p.answered
    return true
  }, WITHIN_MS)
  check({
    what: `a publish made during the fault reached every follower, through the aggregator too${ok === null ? '' : ` (${(took / 1000).toFixed(1)} s after its answer)`}`,
    ok: ok !== null,
  })
}

export const AGGREGATOR_DRILLS: Drill[] = [
  {
    name: 'aggregator ↔ primary cut',
    role: 'aggregator',
    fault: async (f) => (await f.hosts.cut('aggregator', 'pg'), () => f.hosts.heal('aggregator', 'pg')),
    shows: async (f) => {
      const s = await readyz(f.roles.aggregator)
      return s === '200' ? null : `aggregator: /readyz ${s}`
    },
    // the proxy needs no database to answer: its follower of the board goes on, as the board's own do
    meanwhile: async (_f, load, check) => {
      for (const [who, only] of [
        ["the board's followers", undefined],
        ["the aggregator's proxy's follower", PROXY_FOLLOWER],
      ] as const) {
        const from = load.progress(only)
        const moved = await load.timeUntil(() => load.progress(only) >= from + 20, WITHIN_MS)
        check({ what: `${who} went on during the fault`, ok: moved !== null })
      }
    },
    after: aggregatorBack,
  },
  {
    name: 'aggregator ↔ a followed board stalled',
    role: 'aggregator',
    fault: async (f) => (f.board2Link.stall(), () => f.board2Link.pass()),
    // the registry shows the board's last check failing (checkedAt past lastOkAt) until it is marked down
    shows: async (f) => {
      const res = await fetch(`${f.roles.aggregator.url}/registry/boards/${f.board2Authority}`, { signal: AbortSignal.timeout(2000) })
      const { board } = (await res.json()) as { board: { checkedAt: string; lastOkAt: string } }
      return board.checkedAt > board.lastOkAt ? `registry: board2 checkedAt past lastOkAt` : null
    },
    meanwhile: async (_f, load, check) => publishFollowed(load, check),
    after: board2Followed,
  },
]
