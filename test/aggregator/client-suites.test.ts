import { spawn } from 'node:child_process'
import t from 'tap'
import { projectPath } from '../../libs/shared/paths.js'
import { startTestAggregator } from './support.js'

// The project's own client suites, run through the proxy: WIRE_AGGREGATOR_URL makes every board they
// start register with this aggregator, and their client reach it at {aggregator}/sw/{authority}.

const SUITES = ['test/client/round-trip.test.ts']

/** A child tap run of one suite (its own process; the aggregator in this one serves it). */
function runSuite(suite: string, env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(projectPath('node_modules/.bin/tap'), ['--reporter=tap', '--jobs=1', suite], { cwd: projectPath(), env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    child.stdout.on('data', (d: Buffer) => (out += d))
    child.stderr.on('data', (d: Buffer) => (out += d))
    child.on('close', (code) => resolve({ code, out }))
  })
}

t.test('the client round-trip suite passes through {aggregator}/sw/{authority}', async (t) => {
  const agg = await startTestAggregator(t, { AGGREGATOR_REGISTER_RATE_LIMIT_MAX: '0' }, { follow: false })
  for (const suite of SUITES) {
    const r = await runSuite(suite, { WIRE_AGGREGATOR_URL: agg.url })
    const failures = r.out.split('\n').filter((l) => /not ok|Error/.test(l)).slice(0, 20).join('\n')
    t.equal(r.code, 0, `${suite} passes through the aggregator${r.code === 0 ? '' : `:\n${failures}`}`)
    t.match(r.out, /^\s+ok \d+ - /m, 'and ran its tests')
  }
  const listed = (await (await fetch(`${agg.url}/registry/boards?limit=100`)).json()) as { boards: unknown[] }
  t.ok(listed.boards.length >= 4, `their ${listed.boards.length} boards were registered here: the suites went through the aggregator`)
})
