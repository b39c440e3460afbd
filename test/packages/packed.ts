import { execFile } from 'node:child_process'
import { readFileSync, realpathSync } from 'node:fs'
import { delimiter, dirname, relative } from 'node:path'
import { projectPath } from '../../libs/shared/paths.js'

// What the install test needs around it: the README's install lines, the package folders, and an
// environment in which `npm`, `npx` and the installed bins run on the project's Node, not on this
// repository's node_modules.

export const REPO = projectPath()

/** The three package folders: the server at the root, the client library and the command line. */
export const PACKAGE_DIRS = [REPO, projectPath('client'), projectPath('cli')]

export const packageJson = (dir: string) =>
  JSON.parse(readFileSync(`${dir}/package.json`, 'utf8')) as {
    name: string
    version: string
    bin?: Record<string, string>
    engines?: { node?: string }
    publishConfig?: { access?: string }
    dependencies?: Record<string, string>
  }

/** The first fenced sh block after the README's "## Installing the packages", one command a line, comments cut. */
export function readmeInstallBlocks(): string[][] {
  const readme = readFileSync(projectPath('README.md'), 'utf8')
  const section = readme.slice(readme.indexOf('## Installing the packages'))
  const end = section.indexOf('\n## ', 10)
  const blocks = [...section.slice(0, end).matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!)
  return blocks.map((b) =>
    b
      .split('\n')
      .map((l) => l.replace(/\s+#.*$/, '').trim())
      .filter(Boolean),
  )
}

/** The README's client example ("## Client and CLI"): its code, and the file name the README says to save it as. */
export function readmeClientExample(): { file: string; code: string } {
  const readme = readFileSync(projectPath('README.md'), 'utf8')
  const section = readme.slice(readme.indexOf('## Client and CLI'))
  const end = section.indexOf('\n## ', 10)
  const code = /```js\n([\s\S]*?)```/.exec(section.slice(0, end))?.[1] ?? ''
  const file = /save it as `([^`]+)`/.exec(section.slice(0, end))?.[1] ?? ''
  return { file, code }
}

/**
 * How this machine reaches the network, which a user's shell has too: the certificates its TLS
 * trusts and its proxies. Without them npm cannot ask the registry about the packages being
 * installed (SELF_SIGNED_CERT_IN_CHAIN behind an intercepting proxy) and retries each question for
 * minutes before it falls back to the tarballs it was given.
 */
const NETWORK = [
  'NODE_EXTRA_CA_CERTS',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  'HTTPS_PROXY',
  'https_proxy',
  'HTTP_PROXY',
  'http_proxy',
  'NO_PROXY',
  'no_proxy',
]

/**
 * The environment a user's shell has: PATH without anything inside this repository, and with the
 * project's Node first, so `npm`, `npx` and `#!/usr/bin/env node` bins run on it; the machine's
 * network settings (NETWORK). npm prefers its cache (filled by this checkout's `npm ci`), and stays
 * quiet about funding.
 */
export function userEnv(extra: Record<string, string> = {}): Record<string, string> {
  const nodeDir = dirname(realpathSync(projectPath('node_modules/.bin/node'))) // the `node` dev dependency (Node 24)
  const outside = (process.env.PATH ?? '').split(delimiter).filter((p) => p && relative(REPO, p).startsWith('..'))
  const env: Record<string, string> = {
    HOME: process.env.HOME ?? '/root',
    PATH: [nodeDir, ...outside].join(delimiter),
    npm_config_prefer_offline: 'true',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    npm_config_update_notifier: 'false',
  }
  for (const k of NETWORK) if (process.env[k]) env[k] = process.env[k]!
  return { ...env, ...extra }
}

export interface Ran {
  code: number
  out: string
  err: string
}

/** Runs a command to its end (never throws on a non-zero exit: the caller asserts). */
export function run(cmd: string, args: string[], cwd: string, env: Record<string, string>, timeoutMs = 120_000): Promise<Ran> {
  return new Promise((resolve) => {
    execFile(cmd, args, { cwd, env, timeout: timeoutMs, maxBuffer: 16 << 20 }, (err, out, errOut) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1) : 0
      resolve({ code, out: String(out), err: String(errOut) })
    })
  })
}

/** The version of a node binary, or null when there is none at that path. */
export async function nodeVersion(bin: string): Promise<string | null> {
  const r = await run(bin, ['--version'], REPO, userEnv(), 10_000)
  return r.code === 0 ? r.out.trim().replace(/^v/, '') : null
}
