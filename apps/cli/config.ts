import { z } from 'zod'
import { CLI_SETTINGS, schemaOf } from '../../libs/shared/config/index.js'

/** What the command line reads from its environment: its own settings (libs/shared/config/settings/cli.ts), and the server's admin token. */
const CliEnv = schemaOf([CLI_SETTINGS]).extend({
  SERVER_ADMIN_TOKEN: z.string().trim().min(1).optional(), // an operator on the server's own box (any length: the server checks it)
})

export interface CliConfig {
  urls: string[]
  token: string | undefined
  adminToken: string | undefined
  noColor: boolean
}

export class CliConfigError extends Error {
  override name = 'CliConfigError'
}

export function loadCliConfig(env: Record<string, string | undefined>): CliConfig {
  const blanksRemoved = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''))
  const r = CliEnv.safeParse(blanksRemoved)
  if (!r.success) throw new CliConfigError(r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '))
  const e = r.data
  return {
    urls: e.WIRE_URL,
    token: e.WIRE_TOKEN,
    adminToken: e.WIRE_ADMIN_TOKEN ?? e.SERVER_ADMIN_TOKEN,
    noColor: e.NO_COLOR !== undefined,
  }
}
