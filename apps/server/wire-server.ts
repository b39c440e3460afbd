#!/usr/bin/env node
import { parseArgs } from 'node:util'
import { exitIfNodeTooOld } from '../../libs/shared/runtime/index.js'
import { wireVersion } from '../../libs/shared/version.js'

// `wire-server` (the @wire-board/server package's bin): no argument runs the whole board in one
// process, as `npm start` does; `--role <name>` runs one role of a fleet. Each role is its main
// module, loaded only once the Node.js version is known to be good enough. A new role is one entry.

exitIfNodeTooOld('wire-server')

const ROLES: Record<string, { run: () => Promise<unknown>; does: string }> = {
  writer: { run: () => import('../writer/main.js'), does: 'publishes and the admin API' },
  reader: { run: () => import('../reader/main.js'), does: 'reads, long-polls, discovery, the viewer' },
  agents: { run: () => import('../agents/main.js'), does: 'MCP and A2A' },
  sweeper: { run: () => import('../sweeper/main.js'), does: 'expiry and stats jobs' },
  aggregator: { run: () => import('../aggregator/main.js'), does: 'the aggregator: registry, proxy and search across boards' },
  identity: {
    run: () => import('../identity/main.js'),
    does: 'the identity network: identities, tokens, verify, bits (IDENTITY_URL of boards)',
  },
}
const BOARD = () => import('./main.js') // every role in one process on one port

const usage = [
  'Usage: wire-server [--role <role>] [--version]',
  '',
  'Runs a Wire board, configured by environment variables (DATABASE_URL, SERVER_PORT, PUBLIC_WIRE_HOST, …).',
  'With no option: every role in one process, on the embedded database unless DATABASE_URL is set;',
  'with WIRE_NETWORK_BOARDS=N, a whole network in one process: an identity network, an aggregator and N boards.',
  '',
  'Roles (each its own process in a fleet, on PostgreSQL and Redis):',
  ...Object.entries(ROLES).map(([name, r]) => `  --role ${name.padEnd(10)} ${r.does}`),
].join('\n')

let role: string | undefined
try {
  const { values } = parseArgs({
    options: { role: { type: 'string' }, help: { type: 'boolean', short: 'h' }, version: { type: 'boolean', short: 'V' } },
    strict: true,
  })
  if (values.help) {
    process.stdout.write(`${usage}\n`)
    process.exit(0)
  }
  if (values.version) {
    process.stdout.write(`${wireVersion()}\n`)
    process.exit(0)
  }
  role = values.role
} catch (err) {
  process.stderr.write(`wire-server: ${(err as Error).message}\n${usage}\n`)
  process.exit(2)
}
if (role !== undefined && !Object.hasOwn(ROLES, role)) {
  process.stderr.write(`wire-server: unknown role "${role}"; the roles are ${Object.keys(ROLES).join(', ')}\n`)
  process.exit(2)
}
await (role === undefined ? BOARD() : ROLES[role]!.run())
