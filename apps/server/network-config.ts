import { ConfigError, loadConfig, orExit, type Config } from '../../libs/shared/config/index.js'

/** The settings of each role of a network in one process (WIRE_NETWORK_BOARDS). */
export interface NetworkConfigs {
  identity: Config
  aggregator: Config
  /** Board a, b, …: on SERVER_PORT and the ports after it. */
  boards: Config[]
}

type Env = Record<string, string | undefined>

const LOOPBACK_OR_ALL = ['0.0.0.0', '::', '127.0.0.1', '::1', 'localhost']

/**
 * A network in one process, from one environment: every role reads it as it would alone, with its
 * own port and schema on top, named `localhost:<port>` (PUBLIC_WIRE_HOST and PUBLIC_WIRE_URL name
 * one server, so none of them here). Boards verify with the identity network (IDENTITY_URL) and
 * name the aggregator (AGGREGATOR_URL); the aggregator may reach them on loopback and swaps tokens
 * with the same identity network. One WIRE_DATA_DIR (or DATABASE_URL) holds every schema.
 */
export function networkConfigs(env: Env): NetworkConfigs {
  const base = loadConfig(env)
  const { boards, aggregatorPort, identityPort } = base.network
  const boardPorts = Array.from({ length: boards }, (_, i) => base.port + i)
  const ports = [...boardPorts, aggregatorPort, identityPort]
  if (base.port === 0 || boardPorts.at(-1)! > 65535)
    throw new ConfigError(
      `invalid configuration:\n  SERVER_PORT: a network in one process needs ${boards} fixed ports from SERVER_PORT on (it is ${base.port})`,
    )
  // the roles call each other at localhost:<port>
  if (!LOOPBACK_OR_ALL.includes(base.host))
    throw new ConfigError(
      `invalid configuration:\n  SERVER_HOST: a network in one process listens on loopback or every address (${LOOPBACK_OR_ALL.join(', ')}), not ${base.host}`,
    )
  if (new Set(ports).size !== ports.length)
    throw new ConfigError(
      `invalid configuration:\n  WIRE_NETWORK_AGGREGATOR_PORT, WIRE_NETWORK_IDENTITY_PORT: must differ from each other and from the boards' ports ${boardPorts.join(', ')}`,
    )
  const url = (port: number) => `http://localhost:${port}`
  const common: Env = { ...env, WIRE_NETWORK_BOARDS: undefined, PUBLIC_WIRE_HOST: undefined, PUBLIC_WIRE_URL: undefined }
  const schema = base.db.schema === 'public' ? 'board' : base.db.schema
  return {
    identity: loadConfig({ ...common, SERVER_PORT: String(identityPort), IDENTITY_URL: undefined, AGGREGATOR_URL: undefined }),
    aggregator: loadConfig({
      ...common,
      SERVER_PORT: String(aggregatorPort),
      IDENTITY_URL: url(identityPort),
      AGGREGATOR_ALLOW_HOSTS: [env.AGGREGATOR_ALLOW_HOSTS, 'localhost'].filter(Boolean).join(','),
    }),
    boards: boardPorts.map((port, i) => {
      const letter = String.fromCharCode(97 + i)
      return loadConfig({
        ...common,
        SERVER_PORT: String(port),
        WIRE_PG_SCHEMA: `${schema}_${letter}`,
        WIRE_BOARD_NAME: `board-${letter}`,
        IDENTITY_URL: url(identityPort),
        AGGREGATOR_URL: url(aggregatorPort),
      })
    }),
  }
}

/** For the process's main: settings a network cannot run with print one message and exit 1. */
export const networkConfigsOrExit = (env: Env = process.env): NetworkConfigs => orExit(() => networkConfigs(env))
