import t from 'tap'
import { FIRING, HEALTHY, type AlertCase } from './alert-cases.js'
import { promtool, ruleGroups, tempFiles } from './promtool.js'

// deploy/k8s/examples/prometheusrule.yaml with Prometheus's own promtool: its groups pass
// `promtool check rules`, and `promtool test rules` fires each alert on synthetic series
// (alert-cases.ts), with its labels and annotations, and none on a healthy board.
// The metric names are checked against a running board in dashboard.test.ts.

const groups = ruleGroups()
const alerts = groups.flatMap((g) => g.rules)
const byName = new Map(alerts.map((r) => [r.alert, r]))

/** promtool's unit-test file: each firing case on its own series, and the healthy board. */
function unitTests(cases: AlertCase[]) {
  const expected = (c: AlertCase) => {
    const rule = byName.get(c.alert)
    if (!rule) throw new Error(`no alert ${c.alert} in the rule`)
    return { exp_labels: { ...rule.labels, ...c.labels }, exp_annotations: rule.annotations }
  }
  return {
    rule_files: ['rules.yaml'],
    evaluation_interval: '1m',
    tests: [
      ...cases.map((c) => ({
        interval: '1m',
        input_series: c.series,
        alert_rule_test: [{ eval_time: c.at, alertname: c.alert, exp_alerts: [expected(c)] }],
      })),
      {
        interval: '1m',
        input_series: HEALTHY,
        alert_rule_test: alerts.flatMap((r) => ['20m', '59m'].map((at) => ({ eval_time: at, alertname: r.alert, exp_alerts: [] }))),
      },
    ],
  }
}

t.test('promtool check rules: the PrometheusRule groups are valid rules', async (t) => {
  const dir = tempFiles(t, { 'rules.yaml': { groups } })
  const r = promtool(['check', 'rules', 'rules.yaml'], dir)
  t.equal(r.code, 0, r.out)
  t.match(r.out, new RegExp(`SUCCESS: ${alerts.length} rules found`))
  t.ok(alerts.length >= 13, `${alerts.length} alerts`)
})

t.test('promtool test rules: every alert fires on its series, and none on a healthy board', async (t) => {
  t.same(
    alerts.map((r) => r.alert).filter((a) => !FIRING.some((c) => c.alert === a)),
    [],
    'every alert has a firing case',
  )
  for (const a of [
    'WireReadersSaturated',
    'WireEventLoopLag',
    'WireLongPollWakeSlow',
    'WireReplicaLagging',
    'WireReplicaDown',
    'WireShedding',
    'WirePublishErrors',
    'WireSweeperStalled',
    'WireBudgetsRefusingHeavily',
    'WireAggregatorFollowStalled',
  ])
    t.ok(byName.has(a), `the rule alerts on ${a}`)
  const dir = tempFiles(t, { 'rules.yaml': { groups }, 'tests.yaml': unitTests(FIRING) })
  const r = promtool(['test', 'rules', 'tests.yaml'], dir)
  t.equal(r.code, 0, r.out)
  t.match(r.out, /SUCCESS/)
})

t.test('promtool test rules fails when an alert does not fire (negative control)', async (t) => {
  const shedding = FIRING.find((c) => c.alert === 'WireShedding')!
  const quiet = { ...shedding, series: shedding.series.map((s) => ({ ...s, values: '0+6x20' })) } // 0.1/s: under the threshold
  const dir = tempFiles(t, { 'rules.yaml': { groups }, 'tests.yaml': unitTests([quiet]) })
  const r = promtool(['test', 'rules', 'tests.yaml'], dir)
  t.not(r.code, 0, 'a case whose alert stays silent fails')
  t.match(r.out, /WireShedding/)
})
