import { execFileSync, spawnSync } from 'node:child_process'
import { request } from 'node:http'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Test } from 'tap'
import { projectPath } from '../../libs/shared/paths.js'
import { startProcess } from '../helpers/process.js'

// Debian's nginx run by a test: the shipped files of deploy/nginx with only their addresses filled
// in (listen ports, upstream servers, certificate paths), as a non-daemon child process with its own
// prefix, and an access log that names the upstream each request reached.

export const NGINX_DIR = projectPath('deploy/nginx')
export const readNginx = (file: string) => readFileSync(join(NGINX_DIR, file), 'utf8')

/** nginx on the PATH or in /usr/sbin; .ci/run installs Debian's package when it is missing. */
export function nginxBinary(): string {
  for (const dir of [...(process.env.PATH ?? '').split(':'), '/usr/sbin'])
    if (dir && existsSync(join(dir, 'nginx'))) return join(dir, 'nginx')
  throw new Error('nginx is not installed: `apt-get install -y nginx` (.ci/run does this)')
}

/** Replaces every match of `from`, failing if there is none: a template change must not pass silently. */
export function replaceAll(text: string, from: RegExp, to: string): string {
  const re = new RegExp(from.source, from.flags.includes('g') ? from.flags : `${from.flags}g`)
  if (!re.test(text)) throw new Error(`the shipped nginx file no longer has ${from}`)
  return text.replace(re, to)
}

export interface Listen {
  http: number
  /** Uncomments the TLS lines and listens there with this certificate. */
  tls?: { port: number; cert: string; key: string }
}

/** A shipped server block listening on loopback ports instead of 80 and 443. */
export function fillServer(text: string, listen: Listen): string {
  let out = replaceAll(text, /^( *)listen 80;$/m, `$1listen 127.0.0.1:${listen.http};`)
  out = replaceAll(out, /^ *listen \[::\]:80;\n/m, '')
  if (!listen.tls) return out
  out = replaceAll(out, /^( *)# listen 443 ssl;$/m, `$1listen 127.0.0.1:${listen.tls.port} ssl;`)
  out = replaceAll(out, /^ *# listen \[::\]:443 ssl;\n/m, '')
  out = replaceAll(out, /^( *)# ssl_certificate +\S+;$/m, `$1ssl_certificate ${listen.tls.cert};`)
  out = replaceAll(out, /^( *)# ssl_certificate_key +\S+;$/m, `$1ssl_certificate_key ${listen.tls.key};`)
  return replaceAll(out, /^( *)# (ssl_protocols .*;)$/m, '$1$2')
}

/** The upstream blocks of a shipped file with their `server` lines replaced by these ports. */
export function fillUpstreams(text: string, ports: Record<string, number[]>): string {
  const seen = new Set<string>()
  const out = text.replace(/^upstream (\w+) \{\n([\s\S]*?)^\}/gm, (_, name: string, body: string) => {
    const list = ports[name]
    if (!list) throw new Error(`no ports given for upstream ${name}`)
    seen.add(name)
    const params = / *server \S+?((?: [^;\n]+)?);/.exec(body)?.[1] ?? '' // the shipped lines' parameters (max_fails=0)
    const servers = list.map((p) => `    server 127.0.0.1:${p}${params};\n`).join('')
    return `upstream ${name} {\n${servers}${body.replace(/^ *server .*\n/gm, '')}}`
  })
  const missing = Object.keys(ports).filter((n) => !seen.has(n))
  if (missing.length) throw new Error(`no upstream ${missing.join(', ')} in the shipped file`)
  return out
}

/** A self-signed certificate for localhost (openssl), for the TLS lines. */
export function selfSigned(dir: string): { cert: string; key: string } {
  const cert = join(dir, 'cert.pem')
  const key = join(dir, 'key.pem')
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=DNS:localhost,IP:127.0.0.1',
      '-keyout',
      key,
      '-out',
      cert,
    ],
    { stdio: 'ignore' },
  )
  return { cert, key }
}

export interface LogEntry {
  method: string
  uri: string
  status: number
  /** host:port of each upstream tried, in order; '' when nginx answered itself. */
  upstreams: string[]
  seconds: number
  /** The client's address as nginx saw it. */
  client: string
}

export interface Nginx {
  port: number
  dir: string
  /** Every request logged so far (nginx writes a line when the response ends). */
  log(): LogEntry[]
}

const LOG_FORMAT = `log_format wire_test escape=json '{"method":"$request_method","uri":"$request_uri","status":$status,"up":"$upstream_addr","seconds":$request_time,"client":"$remote_addr"}';`

/** An nginx.conf in a temp prefix: `http { … }` holding `files` (config text, in order) and a JSON access log. */
function writeConf(t: Test, files: string[]): { dir: string; args: string[]; access: string } {
  const dir = mkdtempSync(join(tmpdir(), 'wire-nginx-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const includes = files.map((text, i) => {
    const f = join(dir, `part-${i}.conf`)
    writeFileSync(f, text)
    return `  include ${f};`
  })
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((k) => `  ${k}_temp_path ${join(dir, k)};`)
  const conf = join(dir, 'nginx.conf')
  const access = join(dir, 'access.log')
  writeFileSync(
    conf,
    [
      'daemon off;',
      'worker_processes 1;',
      `pid ${join(dir, 'nginx.pid')};`,
      'error_log stderr notice;',
      'events {}',
      'http {',
      `  ${LOG_FORMAT}`,
      `  access_log ${access} wire_test;`,
      ...temp,
      ...includes,
      '}',
      '',
    ].join('\n'),
  )
  return { dir, args: ['-p', dir, '-c', conf], access }
}

/** `nginx -t` on these files: throws with nginx's own message when they do not load. */
export function checkNginx(t: Test, files: string[]): string {
  const r = spawnSync(nginxBinary(), ['-t', ...writeConf(t, files).args], { encoding: 'utf8' })
  if (r.status !== 0) throw new Error(`nginx -t: ${r.stderr}`)
  return r.stderr
}

/**
 * nginx serving these files; the test's only own lines are the wrapper's (pid, logs, temp paths).
 * `nginx -t` runs first, so a bad shipped file fails with nginx's own message.
 */
export async function startNginx(t: Test, files: string[], port: number): Promise<Nginx> {
  checkNginx(t, files)
  const { dir, args, access } = writeConf(t, files)
  await startProcess(t, nginxBinary(), args, process.env, /start worker process/, 10_000)
  return {
    port,
    dir,
    log: () =>
      existsSync(access)
        ? readFileSync(access, 'utf8')
            .split('\n')
            .filter(Boolean)
            .map((l) => {
              const e = JSON.parse(l)
              return {
                method: e.method,
                uri: e.uri,
                status: e.status,
                upstreams: e.up ? e.up.split(/, | : /) : [],
                seconds: e.seconds,
                client: e.client,
              }
            })
        : [],
  }
}

/** An HTTP request from a chosen loopback address (127.0.0.2, …), so nginx sees another client. */
export function requestFrom(
  localAddress: string,
  port: number,
  method: string,
  path: string,
  body: string,
  headers: Record<string, string>,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        localAddress,
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        agent: false,
      },
      (res) => {
        let text = ''
        res
          .setEncoding('utf8')
          .on('data', (d) => (text += d))
          .on('end', () => resolve({ status: res.statusCode!, body: text }))
      },
    )
    req.setTimeout(10_000, () => req.destroy(new Error(`${method} ${path}: no answer in 10 s`)))
    req.on('error', reject).end(body)
  })
}
