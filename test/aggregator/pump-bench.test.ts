import { execFile } from 'node:child_process'
import t from 'tap'
import { projectPath } from '../../libs/shared/paths.js'
import { assertServicesUp, TEST_DATABASE_URL } from '../helpers/services.js'

// A smoke run of bench/aggregator-pump.ts (built, dist/): two short runs, the budget off and on,
// so the benchmark keeps working; what it measures is read from its full run, not asserted here.

t.test('the pump benchmark runs each budget and prints one row each', async (t) => {
  await assertServicesUp()
  const env = {
    ...process.env,
    DATABASE_URL: TEST_DATABASE_URL,
    BENCH_RATES: '0,1048576',
    BENCH_SECONDS: '1.5',
    BENCH_CONCURRENCY: '2',
    BENCH_ANSWER_BYTES: '1048576',
  }
  const output = await new Promise<string>((resolve, reject) =>
    execFile(
      projectPath('node_modules/.bin/node'),
      [projectPath('dist/bench/aggregator-pump.js')],
      { env, timeout: 90_000, maxBuffer: 1 << 20 },
      (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stdout}\n${stderr}`)) : resolve(stdout)),
    ),
  )
  const rows = output.split('\n').filter((l) => /^\| (off|[\d.]+ MiB\/s) \|/.test(l))
  t.same(
    rows.map((r) => r.split(' | ')[0]),
    ['| off', '| 1 MiB/s'],
    'one row per budget, in order',
  )
  for (const r of rows) t.match(r.split(' | ')[7], /\d+×200/, `${r.split(' | ')[0]!.slice(2)}: the pumped answers were answered`)
  t.match(output, /\/proc\/loadavg at the start \d/, "the machine's load is printed beside the figures")
})
