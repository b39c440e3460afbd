import { spawnSync } from 'node:child_process'
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { loadConfig } from '../../libs/shared/config/index.js'
import { LIMITS } from '../../libs/shared/domain/index.js'
import { projectPath } from '../../libs/shared/paths.js'
import { readNginx } from './nginx.js'
import { render } from './render.js'
import { roleOf } from './roles.js'
import { BASE_DIR, byKind, containersOf, settingNames } from './support.js'
import { SHUTDOWN_GRACE_MS } from '../../libs/shared/lifecycle.js'

// deploy/systemd: every unit passes `systemd-analyze verify` with no warning and rates "OK" or
// better in `systemd-analyze security`; each runs a role the manifests run, on the port nginx's
// upstreams name, with a stop timeout above Wire's own grace and room for long-poll sockets.

const DIR = projectPath('deploy/systemd')
const units = readdirSync(DIR)
  .filter((f) => /\.(service|target)$/.test(f))
  .sort()

function analyze(args: string[]) {
  const r = spawnSync('systemd-analyze', args, { encoding: 'utf8' })
  if (r.error) throw new Error(`systemd-analyze: ${r.error.message} (Debian package systemd; .ci/run installs it)`)
  return { code: r.status, out: r.stdout, err: r.stderr.trim() }
}

/** The key=value lines of a unit file, by section (repeated keys kept in order). */
function parseUnit(text: string): Record<string, Array<[string, string]>> {
  const out: Record<string, Array<[string, string]>> = {}
  let section = ''
  for (const line of text.split('\n')) {
    if (/^\s*(#|$)/.test(line)) continue
    const s = /^\[(\w+)\]$/.exec(line)
    if (s) out[(section = s[1]!)] = []
    else out[section]!.push(line.split(/=(.*)/s).slice(0, 2) as [string, string])
  }
  return out
}
const get = (u: ReturnType<typeof parseUnit>, section: string, key: string) =>
  (u[section] ?? []).filter(([k]) => k === key).map(([, v]) => v)

t.test('systemd-analyze verify: every unit loads with no warning', async (t) => {
  t.same(units, [
    'wire-agents.service',
    'wire-fleet.target',
    'wire-reader@.service',
    'wire-sweeper.service',
    'wire-writer.service',
    'wire.service',
  ])
  for (const f of units) {
    const r = analyze(['verify', '--man=no', join(DIR, f)])
    t.equal(r.code, 0, `${f}: exit 0`)
    t.equal(r.err, '', `${f}: no warning`)
  }
  const dir = mkdtempSync(join(tmpdir(), 'wire-units-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  copyFileSync(join(DIR, 'wire-writer.service'), join(dir, 'wire-writer.service'))
  writeFileSync(
    join(dir, 'wire-writer.service'),
    readFileSync(join(dir, 'wire-writer.service'), 'utf8').replace('Restart=on-failure', 'Restart=sometimes'),
  )
  t.match(analyze(['verify', '--man=no', join(dir, 'wire-writer.service')]).err, /restart specifier/, '(a bad line does produce a warning)')
})

t.test('systemd-analyze security: every service is hardened ("OK" or better)', async (t) => {
  for (const f of units.filter((u) => u.endsWith('.service'))) {
    const r = analyze(['security', '--offline=yes', join(DIR, f)])
    const score = Number(/Overall exposure level for \S+: ([\d.]+)/.exec(r.out + r.err)?.[1])
    t.ok(score <= 2, `${f}: exposure ${score} (0 best, 10 worst; OK up to 3.9)`)
  }
})

t.test('each unit runs a role of the manifests, as nginx expects, and stops gracefully', async (t) => {
  const graceS = SHUTDOWN_GRACE_MS / 1000
  const maxConnections = loadConfig({}).http.maxConnections
  const manifestRoles = new Set(byKind(render(BASE_DIR), 'Deployment').map((d) => roleOf(containersOf(d)[0])))
  const upstreamPorts = (file: string, name: string) =>
    [...(new RegExp(`upstream ${name} \\{([^}]*)\\}`).exec(readNginx(file))?.[1] ?? '').matchAll(/server 127\.0\.0\.1:(\d+)[ ;]/g)].map(
      (m) => Number(m[1]),
    )
  const fleet = parseUnit(readFileSync(join(DIR, 'wire-fleet.target'), 'utf8'))
  const wanted = get(fleet, 'Unit', 'Wants').flatMap((v) => v.split(/\s+/))
  const portsOf: Record<string, number[]> = {}
  for (const f of units.filter((u) => u.endsWith('.service'))) {
    const u = parseUnit(readFileSync(join(DIR, f), 'utf8'))
    const exec = get(u, 'Service', 'ExecStart')[0]!.split(' ')
    const m = /^\/opt\/wire\/dist\/apps\/(\w+)\/main\.js$/.exec(exec[1] ?? '')
    t.equal(exec[0], '/usr/bin/node', `${f}: runs node`)
    const role = m?.[1] ?? 'none'
    t.ok(role === 'server' ? f === 'wire.service' : manifestRoles.has(role as never), `${f}: runs ${role}, a role the manifests run`)
    t.same(get(u, 'Service', 'EnvironmentFile'), ['/etc/wire/wire.env'], 'the shared settings file')
    t.same(get(u, 'Service', 'Restart'), ['on-failure'], 'restarted when it fails')
    t.ok(
      Number(get(u, 'Service', 'LimitNOFILE')[0]) > maxConnections + 1000,
      `LimitNOFILE above HTTP_MAX_CONNECTIONS (${maxConnections}) and the pools`,
    )
    const stop = Number(get(u, 'Service', 'TimeoutStopSec')[0])
    t.ok(stop > graceS && stop > LIMITS.maxWaitSeconds, `TimeoutStopSec ${stop} s outlasts Wire's ${graceS} s grace and a long-poll`)
    t.same(get(u, 'Service', 'DynamicUser'), ['yes'], 'no fixed user')
    const port = get(u, 'Service', 'Environment')
      .map((e) => /^SERVER_PORT=(.+)$/.exec(e)?.[1])
      .find(Boolean)!
    const ports =
      port === '%i'
        ? wanted
            .map((w) => /^wire-reader@(\d+)\.service$/.exec(w)?.[1])
            .filter(Boolean)
            .map(Number)
        : [Number(port)]
    portsOf[role] = ports
    if (f !== 'wire.service')
      t.ok(
        wanted.some((w) => w === f || w.startsWith(f.replace('@.service', '@'))),
        `${f}: wire-fleet.target wants it`,
      )
  }
  t.same(portsOf.writer, upstreamPorts('wire-fleet-upstreams.conf', 'wire_writers'), 'the writer listens where nginx sends writes')
  t.same(portsOf.reader, upstreamPorts('wire-fleet-upstreams.conf', 'wire_readers'), 'the readers where nginx sends reads')
  t.same(portsOf.reader, upstreamPorts('wire-fleet-upstreams.conf', 'wire_polls'), "and the same readers where it sends the feed's polls")
  t.same(portsOf.agents, upstreamPorts('wire-fleet-upstreams.conf', 'wire_agents'), 'the agents where nginx sends MCP and A2A')
  t.same(portsOf.server, upstreamPorts('wire-one.conf', 'wire'), 'the single process where wire-one.conf sends everything')
})

t.test('wire.env.example: real settings that load, no SERVER_PORT, TRUST_PROXY for nginx', async (t) => {
  const env = Object.fromEntries(
    readFileSync(join(DIR, 'wire.env.example'), 'utf8')
      .split('\n')
      .filter((l) => l && !l.startsWith('#'))
      .map((l) => l.split(/=(.*)/s).slice(0, 2) as [string, string]),
  )
  const settings = new Set(settingNames())
  t.same(
    Object.keys(env).filter((k) => !settings.has(k)),
    [],
    'every key is a setting',
  )
  t.notOk('SERVER_PORT' in env, 'the units set the port (an EnvironmentFile would override them)')
  t.equal(env.TRUST_PROXY, '1', 'one proxy hop: nginx')
  t.equal(loadConfig(env).http.trustProxy, 1)
  t.equal(env.SERVER_HOST, '127.0.0.1', 'only nginx reaches the roles')
  for (const k of ['SERVER_ADMIN_TOKEN', 'FINGERPRINT_SECRET']) t.match(env[k], /^CHANGE_ME/, `${k} is a placeholder`)
})
