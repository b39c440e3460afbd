import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'
import { startAggregator } from '../aggregator/app.js'
import { startIdentity } from '../identity/app.js'
import type { Config } from '../../libs/shared/config/index.js'
import { httpState } from '../../libs/shared/http/index.js'
import { closeOnFailure, closeStack } from '../../libs/shared/infra/index.js'
import type { StartedApp } from '../../libs/shared/lifecycle.js'
import { createLogger, type Logger } from '../../libs/shared/log/index.js'
import { startBoard } from './app.js'
import type { NetworkConfigs } from './network-config.js'

/** A role of the network, listening. */
export interface Member {
  /** Where it listens on this machine, as `http://localhost:<port>`: also its name. */
  url: string
}

export interface Network {
  identity: Member
  aggregator: Member
  boards: Array<Member & { name: string }>
  close(): Promise<void>
}

/** The token the network registers its boards with the aggregator under (registration takes any token; it only budgets). */
const REGISTRAR = 'wire-network-in-one-process'

/**
 * A whole network in one process (WIRE_NETWORK_BOARDS), for a trial: the identity network, the
 * boards in network mode (verifying tokens with it over HTTP, as any board would), and the
 * aggregator with every board registered, each the role's own start on its own port. On the
 * embedded database they share one PGlite, each in its schema. Closes in reverse: the aggregator
 * stops following first, the identity network goes last.
 */
export async function startNetwork(cfgs: NetworkConfigs, log: Logger): Promise<Network> {
  const stack = closeStack(log)
  const apps: FastifyInstance[] = []
  const listen = async (cfg: Config, started: StartedApp & { app: FastifyInstance }, setting = 'SERVER_PORT') => {
    stack.defer(() => started.close())
    apps.push(started.app)
    // a port in use names the setting that chose it (lifecycle's start hint)
    await started.app
      .listen({ host: cfg.host, port: cfg.port, backlog: cfg.http.listenBacklog })
      .catch((err: unknown) => Promise.reject(Object.assign(err as Error, { setting })))
    return { url: `http://localhost:${cfg.port}` }
  }
  return closeOnFailure(stack.close, async () => {
    const identity = await listen(
      cfgs.identity,
      await startIdentity(cfgs.identity, createLogger('identity', log.level)),
      'WIRE_NETWORK_IDENTITY_PORT',
    )
    const boards: Network['boards'] = []
    for (const cfg of cfgs.boards) {
      const board = await startBoard(cfg, log.child({ board: cfg.authority }))
      boards.push({ ...(await listen(cfg, board)), name: (await board.reader.readSide.board.meta()).name })
    }
    const aggregator = await listen(
      cfgs.aggregator,
      await startAggregator(cfgs.aggregator, createLogger('aggregator', log.level)),
      'WIRE_NETWORK_AGGREGATOR_PORT',
    )
    await calm(apps)
    for (const b of boards) await register(aggregator.url, b.url)
    return { identity, aggregator, boards, close: stack.close }
  })
}

/**
 * Waits (at most 10 s) until no role of the process sheds load. A first start's schema work holds
 * the one event loop for a second or more, and each role's shedding (SHED_EVENT_LOOP_DELAY_MS)
 * sees it, so a request the roles make of each other right away would be refused with 503.
 */
async function calm(apps: FastifyInstance[]): Promise<void> {
  await sleep(1) // after an overdue sample of the event loop's delay
  for (let i = 0; i < 100 && apps.some((app) => httpState(app).overloaded()); i++) await sleep(100)
}

/** Registers a board as anyone would: over HTTP, so the aggregator reads its discovery document. */
async function register(aggregatorUrl: string, boardUrl: string): Promise<void> {
  const res = await fetch(`${aggregatorUrl}/registry/boards`, {
    method: 'POST',
    headers: { authorization: `Bearer ${REGISTRAR}`, 'content-type': 'application/json' },
    body: JSON.stringify({ url: boardUrl }),
  })
  if (!res.ok) throw new Error(`the aggregator did not register ${boardUrl}: ${res.status} ${await res.text()}`)
}
