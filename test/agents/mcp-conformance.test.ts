import { execFile } from 'node:child_process'
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { startListening } from './listen.js'

// The official MCP conformance suite (@modelcontextprotocol/conformance) against a real board, for
// both protocol eras, scenario by scenario. Every scenario that applies to Wire's tools runs here
// and must pass; the checks of a scenario that exercise the suite's own fixture server (tools named
// test_*, prompts, resources) are named below and in docs/agents.md "Conformance", with why.
t.setTimeout(600_000)

const CLI = fileURLToPath(new URL('../../node_modules/@modelcontextprotocol/conformance/dist/index.js', import.meta.url))

interface Check {
  id: string
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'SKIPPED' | 'INFO'
  errorMessage?: string
}

/** Checks whose subject is the suite's fixture server, not a server's protocol handling. */
const FIXTURE_CHECKS: Record<string, string[]> = {
  // diagnostic tools only the suite's "everything" server has
  'server-stateless': [
    'sep-2575-server-rejects-undeclared-capability', // needs tool test_missing_capability
    'sep-2575-missing-capability-http-400', // the same
    'sep-2575-http-server-no-independent-requests-on-stream', // needs tool test_streaming_elicitation
    'sep-2575-server-no-log-without-loglevel', // needs tool test_logging_tool
  ],
  // Wire serves no prompts or resources: those lists answer -32601, as the spec says for an absent capability
  caching: [
    'sep-2549-prompts-list-caching-hints',
    'sep-2549-resources-list-caching-hints',
    'sep-2549-resources-templates-list-caching-hints',
  ],
}

const SCENARIOS: Record<string, string[]> = {
  // server-session-lifecycle and server-sse-multiple-streams are about sessions: this server is stateless
  '2025-11-25': ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection'],
  '2026-07-28': [
    'server-stateless',
    'tools-list',
    'caching',
    'http-header-validation',
    'dns-rebinding-protection',
    'server-sse-multiple-streams',
    'input-required-result-unsupported-methods',
  ],
}

async function runScenario(url: string, scenario: string, version: string): Promise<Check[]> {
  const out = await mkdtemp(join(tmpdir(), 'wire-conformance-'))
  try {
    await new Promise<void>((resolve) => {
      // the CLI exits 1 when a check fails; the checks file is what is asserted on
      execFile(
        process.execPath,
        [CLI, 'server', '--url', `${url}/mcp`, '--scenario', scenario, '--spec-version', version, '-o', out],
        { timeout: 240_000 },
        () => resolve(),
      )
    })
    const [dir] = await readdir(out)
    if (dir === undefined) return []
    return JSON.parse(await readFile(join(out, dir, 'checks.json'), 'utf8')) as Check[]
  } finally {
    await rm(out, { recursive: true, force: true })
  }
}

t.test('the MCP conformance suite passes against a real board, both eras', async (t) => {
  // the suite's client spends most of a small machine's CPU: no load shedding in this board
  const { url } = await startListening(t, { env: { SHED_EVENT_LOOP_DELAY_MS: '0' } })
  for (const [version, scenarios] of Object.entries(SCENARIOS)) {
    for (const scenario of scenarios) {
      t.test(`${version} ${scenario}`, async (t) => {
        const checks = await runScenario(url, scenario, version)
        t.ok(checks.length > 0, 'the scenario ran')
        const leftOut = FIXTURE_CHECKS[scenario] ?? []
        const failed = checks.filter((c) => (c.status === 'FAILURE' || c.status === 'WARNING') && !leftOut.includes(c.id))
        t.same(
          failed.map((c) => `${c.id}: ${c.errorMessage ?? c.status}`),
          [],
          'no failure or warning outside the fixture checks',
        )
        t.ok(
          checks.some((c) => c.status === 'SUCCESS'),
          'at least one check passed',
        )
      })
    }
  }
})
