import type { Presence } from '../bus/index.js'
import type { BoardReader } from '../db/index.js'
import type { BoardMetadata } from '../domain/index.js'

/** Board metadata as GET /sw/wire and the admin API present it (docs/protocol.md "Board metadata"). */
export async function describeBoard(authority: string, board: BoardReader, presence: Presence): Promise<BoardMetadata> {
  const [meta, active, recentPollers] = await Promise.all([board.meta(), board.activeStats(), presence.count()])
  return {
    uri: `sw://${authority}`,
    authority,
    name: meta.name,
    description: meta.description,
    allowedSignalTypes: meta.allowedSignalTypes,
    stats: { activeSignals: active.activeSignals, activeIdentities: active.activeIdentities, recentPollers },
  }
}
