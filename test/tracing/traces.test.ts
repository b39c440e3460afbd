import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { loadConfig } from '../../libs/shared/config/index.js'
import { projectPath } from '../../libs/shared/paths.js'
import { tracing } from '../../libs/shared/tracing/index.js'
import { fleetSchema, json, publish, startRole } from '../helpers/fleet.js'
import { startOtlpReceiver, type OtlpReceiver } from '../helpers/otlp-receiver.js'
import { TEST_DATABASE_URL, TEST_REDIS_URL } from '../helpers/services.js'
import { startStack } from '../helpers/stack.js'
import { eventually } from '../helpers/wait.js'

// OpenTelemetry traces of publishes, page reads and wake-ups, exported by OTLP/HTTP to a receiver
// this test runs (test/helpers/otlp-receiver.ts), from a writer and a reader woken through Redis.
// Off by default: without OTEL_* settings nothing is started, and the SDK is never imported.

t.setTimeout(120_000)
const spansNamed = (r: OtlpReceiver, name: string) => r.spans.filter((s) => s.name === name)

t.test('the OTEL_* settings: off by default, on with an endpoint, off again by the standard switches', async (t) => {
  const base = { DATABASE_URL: 'postgres://x@db/wire' }
  t.equal(loadConfig(base).tracing.enabled, false, 'no endpoint: off')
  const on = loadConfig({ ...base, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }).tracing
  t.match(on, { enabled: true, url: 'http://collector:4318/v1/traces', sampler: 'parentbased_always_on', ratio: 1, scheduleDelayMs: 5000 })
  t.equal(
    loadConfig({ ...base, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/traces' }).tracing.url,
    'http://c:4318/traces',
    'the traces endpoint is taken whole',
  )
  t.equal(
    loadConfig({ ...base, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_TRACES_EXPORTER: 'none' }).tracing.enabled,
    false,
    'OTEL_TRACES_EXPORTER=none',
  )
  t.equal(
    loadConfig({ ...base, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'true' }).tracing.enabled,
    false,
    'OTEL_SDK_DISABLED=true',
  )
  t.throws(
    () => loadConfig({ ...base, OTEL_TRACES_EXPORTER: 'otlp' }),
    /OTEL_TRACES_EXPORTER/,
    'otlp without an endpoint is an error, not silence',
  )
  t.throws(
    () => loadConfig({ ...base, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }),
    /OTEL_EXPORTER_OTLP_PROTOCOL/,
    'a protocol Wire does not speak',
  )
  t.throws(() => loadConfig({ ...base, OTEL_TRACES_SAMPLER: 'sometimes' }), /OTEL_TRACES_SAMPLER/)
})

t.test('off by default: a board without OTEL_* settings does not trace, and only otel.ts imports the SDK, lazily', async (t) => {
  const s = await startStack(t)
  t.equal(s.cfg.tracing.enabled, false)
  t.equal((await s.publish({ $type: 'note' })).statusCode, 200)
  t.equal(tracing.on, false, 'tracing stays off')
  const files = (dir: string): string[] =>
    readdirSync(dir).flatMap((f) => (statSync(join(dir, f)).isDirectory() ? files(join(dir, f)) : f.endsWith('.ts') ? [join(dir, f)] : []))
  const sources = [...files(projectPath('apps')), ...files(projectPath('libs'))]
  const importers = sources.filter((f) => /from '@opentelemetry\//.test(readFileSync(f, 'utf8')))
  t.same(
    importers.map((f) => f.slice(projectPath().length + 1)),
    ['libs/shared/tracing/otel.ts'],
    'the SDK is imported by otel.ts only',
  )
  const staticOtel = sources.filter((f) => /^import\b[^']*from '\.\/otel\.js'/m.test(readFileSync(f, 'utf8')))
  t.same(staticOtel, [], 'and otel.ts only by a dynamic import()')
})

t.test('publish, page reads and wake-ups are traced to the OTLP receiver', async (t) => {
  const receiver = await startOtlpReceiver(t)
  const env = {
    DATABASE_URL: TEST_DATABASE_URL,
    REDIS_URL: TEST_REDIS_URL,
    WIRE_PG_SCHEMA: fleetSchema(t),
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_BSP_SCHEDULE_DELAY: '100',
  }
  const writer = await startRole(t, 'writer', env)
  const reader = await startRole(t, 'reader', { ...env, OTEL_SERVICE_NAME: 'board-readers' })
  const { nextCursor } = await json(`${reader.url}/sw/signals?limit=1`)
  const waiting = json(`${reader.url}/sw/signals?cursor=${nextCursor}&wait=20`)
  t.ok(await eventually(async () => (await json(`${reader.url}/readyz`)).waiting === 1, 10_000), 'a follower waits at the head')

  const traceId = '4bf92f3577b34da6a3ce929d0e0e4736'
  const parent = '00f067aa0ba902b7'
  const res = await fetch(`${writer.url}/sw/signals`, {
    method: 'POST',
    headers: { authorization: 'Bearer trace-agent-token', 'content-type': 'application/json', traceparent: `00-${traceId}-${parent}-01` },
    body: JSON.stringify({ $type: 'note', text: 'traced' }),
  })
  t.equal(res.status, 200)
  const seq = ((await res.json()) as { cursor: number }).cursor
  t.type(seq, 'number')
  const page = await waiting
  t.equal(page.signals.length, 1, 'the follower is woken with the signal')
  t.equal((await publish(writer, { $type: 'bad' }, '')).status, 401, 'a refused publish')

  t.ok(
    await eventually(
      () =>
        spansNamed(receiver, 'wire.publish').length >= 2 &&
        spansNamed(receiver, 'wire.wake').some((s) => s.attributes['wire.wake.answered'] === 1) &&
        spansNamed(receiver, 'wire.read').length >= 2,
      10_000,
    ),
    'spans arrive',
  )
  const [ok, refused] = [
    spansNamed(receiver, 'wire.publish').find((s) => s.attributes['wire.signal.seq'] === seq),
    spansNamed(receiver, 'wire.publish').find((s) => s.attributes['wire.error']),
  ]
  t.match(
    ok,
    { traceId, parentSpanId: parent, resource: { 'service.name': 'wire-writer', 'wire.role': 'writer' } },
    "the publish continues the client's trace",
  )
  t.match(
    refused,
    { attributes: { 'wire.error': 'unauthorized' }, status: { code: 2 } },
    'a refused publish is a failed span, with its code only',
  )
  const wake = spansNamed(receiver, 'wire.wake').find((s) => s.attributes['wire.wake.answered'] === 1)
  t.match(
    wake,
    { resource: { 'service.name': 'board-readers' }, attributes: { 'wire.wake.waiters': 1, 'wire.wake.groups': 1 } },
    'the wake-up that answered the follower',
  )
  const longPoll = spansNamed(receiver, 'wire.read').find((s) => s.attributes['wire.read.wait_ms'] === 20_000)
  t.match(
    longPoll,
    { resource: { 'service.name': 'board-readers' }, attributes: { 'wire.read.cursor': nextCursor, 'wire.read.signals': 1 } },
    'the long-poll read',
  )
  t.ok(
    spansNamed(receiver, 'wire.read').some((s) => s.attributes['wire.read.cursor'] === -1),
    'the newest page read',
  )
  const text = JSON.stringify(receiver.spans)
  t.notOk(text.includes('trace-agent-token') || text.includes('traced'), 'no token or payload in any span')
  t.equal(receiver.refused, 0, 'every export was OTLP/HTTP JSON to /v1/traces')

  // spans still buffered are flushed at shutdown
  const before = spansNamed(receiver, 'wire.publish').length
  await fetch(`${writer.url}/sw/signals`, {
    method: 'POST',
    headers: { authorization: 'Bearer trace-agent-token', 'content-type': 'application/json' },
    body: '{"$type":"last"}',
  })
  await writer.stop()
  t.equal(spansNamed(receiver, 'wire.publish').length, before + 1, 'the last publish span was flushed before the writer exited')
})
