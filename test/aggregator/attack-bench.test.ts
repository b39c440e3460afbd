import { execFile } from 'node:child_process'
import t from 'tap'
import { projectPath } from '../../libs/shared/paths.js'
import { assertServicesUp, TEST_DATABASE_URL } from '../helpers/services.js'

// A smoke run of bench/aggregator-attack.ts (built, dist/): one honest board, two short phases,
// so the benchmark keeps working; what it measures is read from its full run, not asserted here.

t.test('the attack benchmark runs its phases and prints one row each', async (t) => {
  await assertServicesUp()
  const env = {
    ...process.env,
    DATABASE_URL: TEST_DATABASE_URL,
    BENCH_PHASES: 'calm,foreign+proxy',
    BENCH_PHASE_SECONDS: '1.5',
    BENCH_WARMUP_SECONDS: '1',
    BENCH_HONEST_BOARDS: '1',
    BENCH_FOLLOWERS: '2',
    BENCH_PUBLISH_PER_S: '5',
    BENCH_HOSTILE_BOARDS: '1',
    BENCH_ATTACK_CONCURRENCY: '2',
  }
  const output = await new Promise<string>((resolve, reject) =>
    execFile(
      projectPath('node_modules/.bin/node'),
      [projectPath('dist/bench/aggregator-attack.js')],
      { env, timeout: 90_000, maxBuffer: 1 << 20 },
      (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stdout}\n${stderr}`)) : resolve(stdout)),
    ),
  )
  const table = output.slice(output.indexOf('| aggregator | phase |'))
  const rows = table.split('\n').filter((l) => l.startsWith('| this ('))
  t.same(
    rows.map((r) => r.split(' | ')[1]),
    ['calm', 'foreign+proxy'],
    'one row per phase, in order',
  )
  const cells = rows.map((r) => r.split(' | '))
  t.match(cells[0]![2], /^\d+(\.\d+)? \/ \d+(\.\d+)?$/, 'honest followers were measured through the aggregator (p50 / p99)')
  t.match(cells[1]![13], /^0 \(/, "no signal of the board naming another board's uris was indexed")
  t.match(cells[1]![14], /\d+×200/, "the attacker's proxied requests were answered")
  t.match(output, /\/proc\/loadavg at the start \d/, "the machine's load is printed beside the figures")
})
