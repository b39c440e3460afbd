import type { BoardMeta, BoardReader, Rule } from '../db/index.js'
import { WireError } from '../domain/index.js'

interface Snapshot {
  meta: BoardMeta
  deny: Set<string>
  allow: Set<string>
  loadedAt: number
}

/**
 * The board's publish rules, cached for at most `maxAgeMs` (1 s), so an admin change on any writer
 * takes effect on every writer within a second without a query per publish. A change made through
 * this writer invalidates at once.
 */
export function boardPolicy(board: BoardReader, maxAgeMs = 1000, now = Date.now) {
  let snap: Snapshot | null = null
  let loading: Promise<Snapshot> | null = null

  const load = () =>
    (loading ??= Promise.all([board.meta(), board.rules()])
      .then(([meta, rules]: [BoardMeta, Rule[]]) => {
        snap = {
          meta,
          deny: new Set(rules.filter((r) => r.ruleType === 'deny').map((r) => r.identityId)),
          allow: new Set(rules.filter((r) => r.ruleType === 'allow').map((r) => r.identityId)),
          loadedAt: now(),
        }
        return snap
      })
      .finally(() => (loading = null)))

  /** The snapshot while it is fresh, without a promise (every publish asks); else one load for every caller. */
  const current = (): Snapshot | Promise<Snapshot> => (snap && now() - snap.loadedAt < maxAgeMs ? snap : load())

  /** docs/protocol.md "Rules": allowedSignalTypes first; a deny always denies; any allow rule makes the board allow-list only. */
  const allows = (s: Snapshot, identityId: string, type: string) => {
    const types = s.meta.allowedSignalTypes
    if (types && !types.includes(type))
      throw new WireError('forbidden', `signal type "${type.slice(0, 128)}" is not allowed on this board`, { allowedSignalTypes: types })
    if (s.deny.has(identityId)) throw new WireError('forbidden', 'this identity may not publish here')
    if (s.allow.size > 0 && !s.allow.has(identityId)) throw new WireError('forbidden', 'this board is allow-list only')
  }

  return {
    /** Throws the refusal at once while the rules are fresh; a promise only when they must be loaded first. */
    check(identityId: string, type: string): void | Promise<void> {
      const s = current()
      return s instanceof Promise ? s.then((loaded) => allows(loaded, identityId, type)) : allows(s, identityId, type)
    },
    async isAllowListed(identityId: string): Promise<boolean> {
      return (await current()).allow.has(identityId)
    },
    invalidate() {
      snap = null
    },
  }
}
export type BoardPolicy = ReturnType<typeof boardPolicy>
