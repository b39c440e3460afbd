import t from 'tap'
import { loadConfig, unsetForPublicHost } from '../../libs/shared/config/index.js'
import { projectPath } from '../../libs/shared/paths.js'
import { CLI, NODE, wire } from '../cli/run.js'
import { freePort, startProcess } from '../helpers/process.js'
import { dropSchema, TEST_DATABASE_URL, uniqueSchema } from '../helpers/services.js'

// Going public without surprises: on a public name (not loopback, not an IP address) the start
// banner and `wire check-config` name every ★ setting still unset; the banner's examples use the
// address the process serves, not the public URL a proxy will serve later.

const PUBLIC = { PUBLIC_WIRE_HOST: 'board.example.com' }
const ALL_SET = {
  SERVER_ADMIN_TOKEN: 'an-admin-token-1234',
  FINGERPRINT_SECRET: 'a-fingerprint-secret',
  TRUST_PROXY: '1',
  REDIS_URL: 'redis://127.0.0.1:6379',
}
const names = (env: Record<string, string>) => unsetForPublicHost(loadConfig(env)).map((u) => u.setting)

t.test('a public name on PostgreSQL with nothing set names all four', async (t) => {
  t.same(names({ ...PUBLIC, DATABASE_URL: TEST_DATABASE_URL }), ['FINGERPRINT_SECRET', 'SERVER_ADMIN_TOKEN', 'TRUST_PROXY', 'REDIS_URL'])
  t.same(names({ ...PUBLIC, DATABASE_URL: TEST_DATABASE_URL, ...ALL_SET }), [], 'and none once they are set')
  t.same(
    names({ ...PUBLIC, DATABASE_URL: TEST_DATABASE_URL, IDENTITY_URL: 'https://id.example' }),
    ['SERVER_ADMIN_TOKEN', 'TRUST_PROXY', 'REDIS_URL'],
    'network mode has no fingerprints',
  )
  t.same(
    names({ ...PUBLIC }),
    ['DATABASE_URL', 'SERVER_ADMIN_TOKEN', 'TRUST_PROXY'],
    'embedded: PostgreSQL itself is missing; one process needs no Redis or key',
  )
  const why = unsetForPublicHost(loadConfig({ ...PUBLIC, DATABASE_URL: TEST_DATABASE_URL })).find((u) => u.setting === 'TRUST_PROXY')!.why
  t.match(
    why,
    /https:\/\/board\.example\.com is HTTPS, so a proxy in front terminates TLS/,
    'an https:// public URL means a proxy is in front',
  )
})

t.test('loopback names and IP addresses are not public: nothing to name', async (t) => {
  for (const host of [undefined, 'localhost:4000', 'wire.localhost', '127.0.0.1:4000', '10.1.2.3'])
    t.same(names({ ...(host && { PUBLIC_WIRE_HOST: host }), DATABASE_URL: TEST_DATABASE_URL }), [], host ?? 'PUBLIC_WIRE_HOST unset')
})

t.test('wire check-config names them and still exits 0', async (t) => {
  const r = await wire(['check-config'], { ...PUBLIC, DATABASE_URL: TEST_DATABASE_URL, WIRE_CONFIG: '/nonexistent/board.json' })
  t.equal(r.code, 0, r.err)
  t.match(r.out, /^configuration OK: /)
  t.match(r.out, /board\.example\.com is a public name: set these before others use the board/)
  for (const s of ['FINGERPRINT_SECRET', 'SERVER_ADMIN_TOKEN', 'TRUST_PROXY', 'REDIS_URL'])
    t.match(r.out, new RegExp(`\\n  ${s} +\\S`), `names ${s}`)
  const quiet = await wire(['check-config'], {
    ...PUBLIC,
    ...ALL_SET,
    DATABASE_URL: TEST_DATABASE_URL,
    WIRE_CONFIG: '/nonexistent/board.json',
  })
  t.notMatch(quiet.out, /public name/, 'with all of them set, nothing more to say')
})

t.test('the start banner on PostgreSQL: the same list, and examples that reach this process', async (t) => {
  const schema = uniqueSchema('public')
  t.teardown(() => dropSchema(schema))
  const port = await freePort()
  const env = { ...PUBLIC, DATABASE_URL: TEST_DATABASE_URL, WIRE_PG_SCHEMA: schema, WIRE_CONFIG: '/nonexistent/board.json' }
  const server = await startProcess(
    t,
    NODE,
    [projectPath('dist/apps/server/main.js')],
    { PATH: process.env.PATH, ...env, SERVER_PORT: String(port), LOG_LEVEL: 'warn' },
    /Or with the wire command line/,
    60_000,
  )
  const banner = server.output()
  t.match(banner, `is live at http://localhost:${port} `, 'the banner names the address it serves')
  t.match(banner, 'Its public URL (in links and sw:// URIs): https://board.example.com', 'and the public URL apart')
  const check = await wire(['check-config'], env, undefined, CLI)
  const listed = check.out.split('\n').filter((l) => /public name|^ {2}[A-Z_]+ {2}/.test(l))
  t.equal(listed.length, 5, 'check-config: a heading and four settings')
  for (const line of listed) t.match(banner, `  ${line}\n`, `the banner says it too: ${line.trim().slice(0, 40)}…`)
  const curl = /curl -s -X POST (\S+) -H 'Authorization: Bearer ([^']+)'/.exec(banner)
  t.equal(curl?.[1], `http://localhost:${port}/sw/signals`, 'the publish example posts to this process')
  const res = await fetch(curl![1]!, {
    method: 'POST',
    headers: { authorization: `Bearer ${curl![2]}`, 'content-type': 'application/json' },
    body: JSON.stringify({ $type: 'broadcast', $tags: ['hello'], text: 'hi, wire' }),
  })
  const body = (await res.json()) as { signal?: { uri: string } }
  t.equal(res.status, 200, 'and works as printed')
  t.match(body.signal?.uri, /^sw:\/\/board\.example\.com\/signals\//, 'while the signal carries the public name')
  server.signal('SIGTERM')
  await server.exited
})
