import { z } from 'zod'
import type { Group, Schemas } from '../kinds.js'
import { address, database, identity, signals } from './board.js'
import { exposure, tuning } from './exposure.js'
import { links } from './links.js'
import { aggregator, identityNetwork, network } from './roles.js'
import { tracing } from './tracing.js'

export { cli } from './cli.js'

/** Every setting a Wire server reads (every role's), by group, in the order of the README's table. Nothing else reads the environment. */
export const SERVER_GROUPS = [
  database,
  links,
  address,
  identity,
  signals,
  exposure,
  tuning,
  tracing,
  aggregator,
  identityNetwork,
  network,
] as const

type Union<G extends readonly Group[]> = G[number]['settings']
type Intersection<U> = (U extends unknown ? (x: U) => void : never) extends (x: infer I) => void ? I : never

/** The zod object of some groups' settings, keyed by name (a name in two groups is a mistake the settings test finds). */
export function schemaOf<const G extends readonly Group[]>(groups: G) {
  const shape = Object.fromEntries(groups.flatMap((g) => Object.entries(g.settings).map(([name, s]) => [name, s.schema])))
  return z.object(shape as Schemas<Intersection<Union<G>>>)
}

/** The server's environment, parsed: one field per setting, as its kind reads it. */
export const Env = schemaOf(SERVER_GROUPS)

/** The names of every setting a Wire server reads (the command line's own are in `cli`). */
export const SETTING_NAMES: readonly string[] = SERVER_GROUPS.flatMap((g) => Object.keys(g.settings))
