import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { request } from 'node:https'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { projectPath } from '../../libs/shared/paths.js'
import { bossSchemaName } from '../../libs/shared/db/index.js'
import { freePort, startProcess } from '../helpers/process.js'
import { assertServicesUp, dropSchema, TEST_DATABASE_URL, uniqueSchema } from '../helpers/services.js'
import { fillServer, fillUpstreams, readNginx, requestFrom, selfSigned, startNginx } from './nginx.js'

// deploy/nginx/wire-one.conf, as shipped, with its TLS lines switched on (a self-signed certificate),
// in front of one Wire process on PostgreSQL, as wire.service runs it with DATABASE_URL set.

t.setTimeout(60_000)

/** An HTTPS request that trusts only the test's certificate. */
function https(
  port: number,
  ca: string,
  method: string,
  path: string,
  body = '',
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        servername: 'localhost',
        port,
        method,
        path,
        ca,
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        agent: false,
      },
      (res) => {
        let text = ''
        res
          .setEncoding('utf8')
          .on('data', (d) => (text += d))
          .on('end', () => resolve({ status: res.statusCode!, body: text, headers: res.headers }))
      },
    )
    req.on('error', reject).end(body)
  })
}

t.test('one process behind the shipped nginx configuration, over HTTP and HTTPS', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'wire-one-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const wirePort = await freePort()
  await assertServicesUp()
  const schema = uniqueSchema('nginx_one')
  t.teardown(async () => {
    await dropSchema(schema)
    await dropSchema(bossSchemaName(schema))
  })
  const env: Record<string, string | undefined> = {
    ...process.env,
    DATABASE_URL: TEST_DATABASE_URL,
    WIRE_PG_SCHEMA: schema,
    SERVER_PORT: String(wirePort),
    SERVER_HOST: '127.0.0.1',
    TRUST_PROXY: '1',
    WIRE_CONFIG: '/nonexistent/board.json',
    LOG_LEVEL: 'info',
    PUBLISH_ADDRESS_RATE_LIMIT_MAX: '1',
  }
  for (const k of ['REDIS_URL', 'IDENTITY_URL', 'DATABASE_REPLICA_URL']) delete env[k]
  const wire = await startProcess(
    t,
    projectPath('node_modules/.bin/node'),
    [projectPath('dist/apps/server/main.js')],
    env,
    /Server listening/,
    60_000,
  )

  const [http, tls] = [await freePort(), await freePort()]
  const cert = selfSigned(dir)
  const upstreamed = fillUpstreams(readNginx('wire-one.conf'), { wire: [wirePort] })
  const nginx = await startNginx(t, [fillServer(upstreamed, { http, tls: { port: tls, ...cert } })], http)
  const ca = readFileSync(cert.cert, 'utf8')

  const discovery = await https(tls, ca, 'GET', '/.well-known/wire')
  t.equal(discovery.status, 200, 'discovery over HTTPS')
  const head = JSON.parse((await https(tls, ca, 'GET', '/sw/signals?limit=1')).body).nextCursor as number
  const published = await https(tls, ca, 'POST', '/sw/signals', JSON.stringify({ $type: 'broadcast', text: 'over tls' }), {
    authorization: 'Bearer one-token',
    'content-type': 'application/json',
  })
  t.equal(published.status, 200, 'a publish over HTTPS')
  const page = (await (await fetch(`http://127.0.0.1:${http}/sw/signals?cursor=${head}`)).json()) as any
  t.same(
    page.signals.map((s: any) => s.payload.text),
    ['over tls'],
    'read back over HTTP',
  )
  const t0 = Date.now()
  const poll = await https(tls, ca, 'GET', `/sw/signals?cursor=${page.nextCursor}&wait=2`)
  t.equal(poll.status, 200, 'a long-poll over HTTPS is answered at its deadline')
  t.ok(Date.now() - t0 >= 1900, `after ${Date.now() - t0} ms`)

  for (const path of ['/metrics', '/metrics/', '//metrics', '/%6detrics']) {
    t.equal((await fetch(`http://127.0.0.1:${http}${path}`)).status, 404, `HTTP ${path}: refused`)
    t.equal((await https(tls, ca, 'GET', path)).status, 404, `HTTPS ${path}: refused`)
  }
  t.equal((await fetch(`http://127.0.0.1:${wirePort}/metrics`)).status, 200, 'scraped on the local port')

  const publishFrom = (from: string, i: number) =>
    requestFrom(from, http, 'POST', '/sw/signals', JSON.stringify({ $type: 'broadcast', text: from }), {
      authorization: `Bearer from-${from}-${i}`,
      'content-type': 'application/json',
      'x-forwarded-for': `198.51.100.${i}`,
    })
  t.equal((await publishFrom('127.0.0.2', 1)).status, 200, 'TRUST_PROXY=1: the first publish from 127.0.0.2')
  t.equal((await publishFrom('127.0.0.2', 2)).status, 429, 'the second is over its address budget, whatever X-Forwarded-For says')
  t.equal((await publishFrom('127.0.0.3', 3)).status, 200, 'another address has its own')

  wire.signal('SIGTERM')
  await wire.exited
  const down = await fetch(`http://127.0.0.1:${http}/sw/signals`)
  t.equal(down.status, 503, 'Wire stopped: 503')
  t.equal(down.headers.get('retry-after'), '2', 'with Retry-After')
  t.match(await down.json(), { error: { code: 'unavailable' } }, "and Wire's JSON error, so clients back off")
  t.ok(nginx.log().length > 10, `${nginx.log().length} requests logged`)
})
