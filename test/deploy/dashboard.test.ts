import { readFileSync } from 'node:fs'
import t from 'tap'
import { purgeExpired } from '../../apps/sweeper/jobs/purge-expired.js'
import { signalPurger } from '../../libs/shared/db/index.js'
import { createLogger } from '../../libs/shared/log/index.js'
import { projectPath } from '../../libs/shared/paths.js'
import { listen } from '../helpers/browser.js'
import { startPrometheus } from '../helpers/prometheus.js'
import { startStack } from '../helpers/stack.js'
import { until } from '../helpers/wait.js'
import { exportedNames, metricNames } from './promql.js'

// deploy/grafana/wire-dashboard.json against a real Prometheus (Debian's binary) scraping a real
// board on PostgreSQL and Redis while it publishes, wakes long-polls and reads: every panel's query
// runs through Prometheus's HTTP API without error, names only metrics the board's /metrics shows,
// and returns data.

const dashboard = JSON.parse(readFileSync(projectPath('deploy/grafana/wire-dashboard.json'), 'utf8'))
const targets: Array<{ panel: string; expr: string }> = dashboard.panels.flatMap((p: any) =>
  (p.targets ?? []).map((x: any) => ({ panel: p.title, expr: x.expr })),
)
// Grafana's variables, as Grafana fills them in before querying (a 1 s scrape: 10 s holds 10 samples)
const filled = (expr: string) => expr.replaceAll('$__rate_interval', '10s')
// biome-ignore lint/suspicious/noTemplateCurlyInString: Grafana's own ${datasource} variable, as the dashboard holds it
const DATASOURCE = '${datasource}'

t.test('the dashboard: its panels query Prometheus through the datasource variable', async (t) => {
  t.ok(targets.length >= 20, `${targets.length} queries`)
  t.ok(dashboard.templating.list.some((v: any) => v.type === 'datasource' && v.name === 'datasource'))
  for (const p of dashboard.panels.filter((p: any) => p.type !== 'row'))
    t.equal(p.datasource?.uid, DATASOURCE, `${p.title}: the chosen Prometheus`)
  for (const topic of ['Publishes', 'Deliveries', 'Lag', 'Shedding', 'Database'])
    t.ok(
      dashboard.panels.some((p: any) => p.type === 'row' && p.title.includes(topic)),
      `a ${topic} row`,
    )
})

t.test('the metric names of a query are found, and an unknown one is caught (negative control)', async (t) => {
  t.same(metricNames('histogram_quantile(0.99, sum by (le, pool) (rate(wire_db_query_duration_seconds_bucket{pool=~"a|b"}[5m]))) > 1e-9'), [
    'wire_db_query_duration_seconds_bucket',
  ])
  t.same(metricNames('time() - max by (sweep) (wire_sweep_last_success_timestamp_seconds) or vector(0)'), [
    'wire_sweep_last_success_timestamp_seconds',
  ])
  t.same(metricNames('sum(rate(wire_no_such_thing_total[1m])) / sum(up)'), ['wire_no_such_thing_total', 'up'])
})

t.test('every panel query runs on a real Prometheus scraping a board, and returns data', async (t) => {
  const s = await startStack(t)
  const url = await listen(s)
  const prom = await startPrometheus(t, [new URL(url).host])
  const exported = exportedNames(await (await fetch(`${url}/metrics`)).text())
  // a board at work: publishes (one refused for its body), followers long-polling at the head, newest and deep reads
  let running = true
  const auth = { authorization: 'Bearer agent-one-token', 'content-type': 'application/json' }
  const publisher = (async () => {
    for (let n = 0; running; n++) {
      await fetch(`${url}/sw/signals`, { method: 'POST', headers: auth, body: JSON.stringify({ $type: 'note', n }) })
      if (n % 5 === 0) await fetch(`${url}/sw/signals`, { method: 'POST', headers: auth, body: '{"not":' })
      await fetch(`${url}/sw/signals?cursor=0&limit=5`) // below the tail's reach is the database's
      await fetch(`${url}/sw/signals?limit=3`)
      await new Promise((r) => setTimeout(r, 50))
    }
  })()
  const follower = async () => {
    let cursor = ((await (await fetch(`${url}/sw/signals?limit=1`)).json()) as { nextCursor: number }).nextCursor
    while (running)
      cursor = ((await (await fetch(`${url}/sw/signals?cursor=${cursor}&wait=2`)).json()) as { nextCursor: number }).nextCursor
  }
  const followers = Array.from({ length: 4 }, follower)
  t.teardown(async () => {
    running = false
    await Promise.all([publisher, ...followers])
  })
  await purgeExpired(signalPurger(s.infra.primary, s.infra.schema), createLogger('server', 'silent'), {
    graceSeconds: 3600,
    batchSize: 100,
    budgetMs: 10_000,
    pauseMs: 0,
  })

  const has = async (expr: string) => ((await prom.query(expr)).data?.result.length ?? 0) > 0
  await until(
    async () =>
      (await has('sum(rate(wire_publishes_total{code="200"}[10s])) > 0')) &&
      (await has('sum(rate(wire_wake_to_response_seconds_count[10s])) > 0')) &&
      (await has('wire_sweep_last_success_timestamp_seconds')),
    60_000,
    'Prometheus to see the board at work',
  )
  const up = await prom.query('up{job="wire"}')
  t.equal(up.data?.result[0]?.value[1], '1', 'Prometheus scrapes the board')

  const current = exportedNames(await (await fetch(`${url}/metrics`)).text())
  for (const { panel, expr } of targets) {
    const r = await prom.query(filled(expr))
    t.equal(r.status, 'success', `${panel}: ${expr} runs${r.error ? ` (${r.error})` : ''}`)
    const unknown = metricNames(expr).filter((n) => !current.has(n))
    t.same(unknown, [], `${panel}: names only metrics the board exports`)
    t.ok((r.data?.result.length ?? 0) > 0, `${panel}: ${expr} returns data`)
  }
  t.ok(
    exported.has('wire_waiting_pollers_max') && exported.has('wire_db_query_duration_seconds_bucket'),
    'the metrics the dashboard added are served',
  )
})
