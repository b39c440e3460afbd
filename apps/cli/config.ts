import { z } from 'zod'

const optionalText = z.string().trim().min(1).optional()

/** What the command line reads from its environment (the server's own settings go through libs/shared/config). */
const CliEnv = z.object({
  // one base URL, or several separated by commas: a follower moves to the next when one fails
  WIRE_URL: z
    .string()
    .default('http://localhost:4000')
    .transform((v) => v.split(',').map((u) => u.trim()).filter((u) => u !== ''))
    .pipe(z.array(z.string().regex(/^https?:\/\/[^\s]+$/i, 'must be http(s) URLs, separated by commas')).min(1)),
  WIRE_TOKEN: optionalText,
  WIRE_ADMIN_TOKEN: optionalText,
  SERVER_ADMIN_TOKEN: optionalText, // an operator on the server's own box
  NO_COLOR: z.string().optional(),
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
