import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Test } from 'tap'
import { freePort, startProcess } from './process.js'

/** Prometheus's own answer to an instant query: status, data or error. */
interface InstantAnswer {
  status: string
  error?: string
  data?: { resultType: string; result: Array<{ metric: Record<string, string>; value: [number, string] }> }
}

export interface Prometheus {
  url: string
  /** An instant query through the HTTP API. */
  query(expr: string): Promise<InstantAnswer>
}

/**
 * A real Prometheus (Debian's `prometheus` binary) scraping `targets` (host:port, path /metrics)
 * every second, its storage in a temporary directory; killed and removed with the test.
 */
export async function startPrometheus(t: Test, targets: string[]): Promise<Prometheus> {
  const dir = mkdtempSync(join(tmpdir(), 'wire-prometheus-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const config = {
    global: { scrape_interval: '1s', evaluation_interval: '1s' },
    scrape_configs: [{ job_name: 'wire', static_configs: [{ targets }] }],
  }
  writeFileSync(join(dir, 'prometheus.yml'), JSON.stringify(config)) // JSON is YAML
  const port = await freePort()
  const args = [
    `--config.file=${join(dir, 'prometheus.yml')}`,
    `--storage.tsdb.path=${join(dir, 'data')}`,
    `--web.listen-address=127.0.0.1:${port}`,
  ]
  if (spawnSync('prometheus', ['--version']).error)
    throw new Error("prometheus is not installed: apt-get install prometheus (Debian's package)")
  const proc = await startProcess(t, 'prometheus', args, { PATH: process.env.PATH }, /Server is ready to receive web requests/, 30_000)
  const url = `http://127.0.0.1:${port}`
  for (
    let i = 0;
    i < 300 &&
    (await fetch(`${url}/-/ready`).then(
      (r) => r.status,
      () => 0,
    )) !== 200;
    i++
  ) {
    if (proc.child.exitCode !== null) throw new Error(`prometheus exited:\n${proc.output()}`)
    await new Promise((r) => setTimeout(r, 100))
  }
  return {
    url,
    query: async (expr) =>
      (await fetch(`${url}/api/v1/query`, { method: 'POST', body: new URLSearchParams({ query: expr }) })).json() as never,
  }
}
