import type { RoleProc } from '../procs.js'
import type { Hosts } from './hosts.js'
import { linkProxy, type LinkProxy } from './proxy.js'

// The aggregator's part of the drills' fleet (fleet.ts): the aggregator on a host of its own,
// following two boards: the fleet's own board (its reads served by the first reader) and a second,
// one-process board on its host ("board2"). It reaches each board through a proxy on the client
// host (proxy.ts) that a drill may stall, and whose address is the board's public one
// (PUBLIC_WIRE_HOST), as a registered board's URL host must be its authority.

export const AGGREGATOR_HOSTS = ['aggregator', 'board2'] as const
const ROLE_PORT = 4000

export interface AggregatorLinks {
  /** The fleet's board (to the first reader) and the second board, as the aggregator reaches them. */
  boardLink: LinkProxy
  board2Link: LinkProxy
  /** Each board's authority: its link's host:port. */
  authority: string
  board2Authority: string
}

/** The links, made before the boards start (their address is the boards' public one). */
export async function aggregatorLinks(hosts: Hosts, undo: Array<() => Promise<unknown>>): Promise<AggregatorLinks> {
  const boardLink = await linkProxy(hosts.ip('client'), { host: hosts.ip('reader1'), port: ROLE_PORT })
  undo.push(() => boardLink.close())
  const board2Link = await linkProxy(hosts.ip('client'), { host: hosts.ip('board2'), port: ROLE_PORT })
  undo.push(() => board2Link.close())
  return {
    boardLink,
    board2Link,
    authority: `${boardLink.host}:${boardLink.port}`,
    board2Authority: `${board2Link.host}:${board2Link.port}`,
  }
}

/** The aggregator's own settings in the drills: every board reachable on the hosts' network, checked every 2 s, read as fast as it publishes. */
export const aggregatorEnv = (cidr: string): Record<string, string> => ({
  AGGREGATOR_ALLOW_HOSTS: cidr,
  AGGREGATOR_RECHECK_SECONDS: '2',
  AGGREGATOR_BOARD_PAGES_PER_MINUTE: '60000',
  AGGREGATOR_REGISTER_RATE_LIMIT_MAX: '0',
  AGGREGATOR_PROXY_PER_ADDRESS_MAX: '0',
})

/**
 * Registers both boards with the aggregator. Each board's link is first seen answering its
 * discovery document from here; a registration the aggregator refuses as `unreachable` is tried
 * again up to twice (CI once saw one such refusal while the suite's embedded databases loaded the
 * machine, and the next run passed: not explained, so not hidden either: the third refusal fails).
 */
export async function registerBoards(aggregator: RoleProc, links: AggregatorLinks): Promise<void> {
  for (const link of [links.boardLink, links.board2Link]) {
    const url = `http://${link.host}:${link.port}`
    const answers = async () => {
      try {
        return (await fetch(`${url}/.well-known/wire`, { signal: AbortSignal.timeout(5_000) })).ok
      } catch {
        return false
      }
    }
    for (let i = 0; !(await answers()); i++) {
      if (i >= 100) throw new Error(`${url}/.well-known/wire does not answer through its link`)
      await new Promise((r) => setTimeout(r, 100))
    }
    for (let attempt = 1; ; attempt++) {
      const res = await fetch(`${aggregator.url}/registry/boards`, {
        method: 'POST',
        headers: { authorization: 'Bearer drill-registrant', 'content-type': 'application/json' },
        body: JSON.stringify({ url }),
      })
      if (res.status === 201) break
      const text = await res.text()
      if (attempt >= 3 || !text.includes('"unreachable"')) throw new Error(`registering ${link.host}:${link.port}: ${res.status} ${text}`)
      process.stderr.write(`drill: registering ${url} refused as unreachable (attempt ${attempt}: ${text.slice(0, 300)}), trying again\n`)
    }
  }
}

/** Publishes `text` on a board (a new thread); its id. */
export async function publishOn(url: string, text: string): Promise<string> {
  const res = await fetch(`${url}/sw/signals`, {
    method: 'POST',
    headers: { authorization: 'Bearer drill-board2-publisher', 'content-type': 'application/json' },
    body: JSON.stringify({ $type: 'broadcast', text }),
    signal: AbortSignal.timeout(10_000),
  })
  if (res.status !== 200) throw new Error(`publish: ${res.status} ${await res.text()}`)
  return ((await res.json()) as { signal: { id: string } }).signal.id
}

/** True once the aggregator's search finds signal `id` of `board`. */
export async function searchFinds(aggregator: RoleProc, board: string, id: string): Promise<boolean> {
  const res = await fetch(`${aggregator.url}/search/signals?board=${encodeURIComponent(board)}&limit=100`, {
    signal: AbortSignal.timeout(3000),
  })
  if (res.status !== 200) return false
  return ((await res.json()) as { signals: Array<{ id: string }> }).signals.some((s) => s.id === id)
}
