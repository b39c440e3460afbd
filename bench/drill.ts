import { DRILLS } from './lib/drill/drills.js'
import { DRILL_ENV, startNetFleet } from './lib/drill/fleet.js'
import { canMakeHosts } from './lib/drill/hosts.js'
import { runDrill, type DrillReport } from './lib/drill/runner.js'

// npm run drill: the network drills (docs/operations.md "The network drills") on a fleet of hosts
// made for them (network namespaces; needs root), one after the other, every deadline at its
// default, and one table of what each kept of the promise. Each fault is held HOLD_MS (20000) at
// least, past the keepalives' detection of an idle connection (DB_KEEPALIVE_MS, REDIS_KEEPALIVE_MS
// plus Node's ten probes a second apart). DRILLS=<text> runs the drills whose name contains it.

const out = (s: string) => process.stdout.write(`${s}\n`)
const s = (x: number | null) => (x === null ? '—' : x.toFixed(1))

function table(reports: DrillReport[]): string[] {
  const lines = [
    '| drill | acknowledged | lost | not indexed | skipped | followers caught up | refused | detect s | recover s | checks | ready after | what the operator saw |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
  ]
  for (const r of reports) {
    const refused =
      Object.entries(r.refused)
        .map(([k, v]) => `${v}×${k}`)
        .join(' ') || '0'
    const failed = r.checks.filter((c) => !c.ok).map((c) => c.what)
    const checks = failed.length ? `failed: ${failed.join('; ')}` : `${r.checks.length} ok`
    lines.push(
      `| ${r.drill} | ${r.acknowledged}/${r.publishes} | ${r.lost} | ${r.unindexed} | ${r.skipped} | ${r.caughtUp}/${r.followers} | ${refused} | ${s(r.detectS)} | ${s(r.recoverS)} | ${checks} | ${r.ready ? 'yes' : 'no'} | ${r.saw.replaceAll('|', '\\|')} |`,
    )
  }
  return lines
}

async function main() {
  const can = await canMakeHosts()
  if (can !== true) throw new Error(can)
  const only = process.env.DRILLS
  const t0 = Date.now()
  const fleet = await startNetFleet(DRILL_ENV)
  process.stderr.write(`fleet up on its hosts in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`)
  const reports: DrillReport[] = []
  try {
    for (const d of DRILLS.filter((d) => !only || d.name.includes(only))) {
      const t = Date.now()
      reports.push(await runDrill(fleet, d, { detectMs: 30_000, holdMs: Number(process.env.HOLD_MS ?? 20_000), recoverMs: 60_000 }))
      process.stderr.write(`${d.name}: ${((Date.now() - t) / 1000).toFixed(1)} s\n`)
    }
  } finally {
    await fleet.close()
  }
  for (const line of table(reports)) out(line)
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(`${(err as Error).stack}\n`)
    process.exit(1)
  },
)
