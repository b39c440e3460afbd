import { spawn } from 'node:child_process'
import t from 'tap'
import { projectPath } from '../../libs/shared/paths.js'
import { auth, startTestAggregator, startTestBoard } from './support.js'

// The project's own client suites, run through the proxy: WIRE_AGGREGATOR_URL makes every board they
// start register with this aggregator, and their client reach it at {aggregator}/sw/{authority}.

const SUITES = ['test/client/round-trip.test.ts']

/** A child tap run of one suite (its own process; the aggregator in this one serves it). */
function runSuite(suite: string, env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(projectPath('node_modules/.bin/tap'), ['--reporter=tap', '--jobs=1', suite], {
      cwd: projectPath(),
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let out = ''
    child.stdout.on('data', (d: Buffer) => (out += d))
    child.stderr.on('data', (d: Buffer) => (out += d))
    child.on('close', (code) => resolve({ code, out }))
  })
}

for (const form of ['board', 'reference'] as const) {
  const shown = form === 'board' ? '{aggregator}/sw/{authority}/sw/signals' : 'the reference form {aggregator}/sw/{authority}/signals'
  t.test(`the client round-trip suite passes through ${shown}`, async (t) => {
    const agg = await startTestAggregator(t, { AGGREGATOR_REGISTER_RATE_LIMIT_MAX: '0' }, { follow: false })
    for (const suite of SUITES) {
      const r = await runSuite(suite, { WIRE_AGGREGATOR_URL: agg.url, WIRE_AGGREGATOR_FORM: form })
      const failures = r.out
        .split('\n')
        .filter((l) => /not ok|Error/.test(l))
        .slice(0, 20)
        .join('\n')
      t.equal(r.code, 0, `${suite} passes through the aggregator${r.code === 0 ? '' : `:\n${failures}`}`)
      t.match(r.out, /^\s+ok \d+ - /m, 'and ran its tests')
    }
    const listed = (await (await fetch(`${agg.url}/registry/boards?limit=100`)).json()) as { boards: unknown[] }
    t.ok(listed.boards.length >= 4, `their ${listed.boards.length} boards were registered here: the suites went through the aggregator`)
  })
}

t.test('the reference form and the board form reach the same answers', async (t) => {
  const board = await startTestBoard(t)
  const agg = await startTestAggregator(t, {}, { follow: false })
  t.equal((await agg.register(board.url)).status, 201)
  const pub = await fetch(`${agg.url}/sw/${board.authority}/signals`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...auth() },
    body: JSON.stringify({ $type: 'request', text: 'both forms' }),
  })
  t.equal(pub.status, 200, 'published through the reference form')
  const { signal } = (await pub.json()) as any
  for (const path of [`/signals/${signal.id}`, `/signals/${signal.id}/thread`, '/stats', '/wire', '/tags', '/signals?limit=1']) {
    const [ref, own] = await Promise.all([
      fetch(`${agg.url}/sw/${board.authority}${path}`),
      fetch(`${agg.url}/sw/${board.authority}/sw${path}`),
    ])
    t.equal(ref.status, 200, `${path}: 200 in the reference form`)
    t.equal(ref.status, own.status, `${path}: as in the board form`)
    const [a, b] = [(await ref.json()) as any, (await own.json()) as any]
    delete a.serverNow, delete b.serverNow, delete a.generatedAt, delete b.generatedAt
    t.same(a, b, `${path}: the same body`)
  }
  const doc = await fetch(`${agg.url}/sw/${board.authority}/.well-known/wire`)
  t.equal(doc.status, 200, "the board's own top-level paths pass as they are")
})
