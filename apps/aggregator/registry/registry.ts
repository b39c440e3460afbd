import type { Redis } from 'ioredis'
import { bearerToken, fingerprint } from '../../../libs/shared/auth/index.js'
import type { Caller } from '../../../libs/shared/caller.js'
import type { Config } from '../../../libs/shared/config/index.js'
import { WireError } from '../../../libs/shared/domain/index.js'
import { WindowLimiter } from '../../../libs/shared/limits/index.js'
import type { Logger } from '../../../libs/shared/log/index.js'
import type { FetchJsonOptions } from '../outbound/fetch-json.js'
import { describeBoard, normaliseBoardUrl } from './discovery.js'
import type { BoardStatus, RegisteredBoard, RegistryStore } from './store.js'

/**
 * The registry's one door: registration spends the caller's budgets (per identity and per address)
 * before any outbound request, then checks the board and records it.
 */
export function registry(cfg: Config, store: RegistryStore, fetchOpts: FetchJsonOptions, log: Logger, redis?: Redis) {
  const a = cfg.aggregator
  const budget = (name: string) =>
    a.registerMax > 0
      ? new WindowLimiter(
          {
            keyPrefix: `wire:${a.schema}:register:${name}`,
            points: a.registerMax,
            duration: 3600,
            what: `${a.registerMax} registrations per hour from one ${name}`,
            reason: 'registrations',
          },
          redis,
        )
      : null
  const perIdentity = budget('identity')
  const perAddress = budget('address')
  const key = cfg.secrets.fingerprintSecret ?? 'wire-aggregator'
  const spend = async (limiter: WindowLimiter | null, k: string) => void (limiter && (await limiter.consume(k)))
  return {
    async register(
      caller: Pick<Caller, 'address' | 'authorization'>,
      body: unknown,
    ): Promise<{ board: RegisteredBoard; created: boolean }> {
      const token = bearerToken(caller.authorization)
      if (!token || token.length < 8) throw new WireError('unauthorized', 'a bearer token is required to register a board')
      await spend(perAddress, caller.address)
      await spend(perIdentity, fingerprint(key, token))
      const url = normaliseBoardUrl((body as { url?: unknown } | null)?.url)
      const existing = await store.byUrl(url)
      if (!existing && (await store.count()) >= a.maxBoards)
        throw new WireError('forbidden', `this aggregator holds its limit of ${a.maxBoards} boards`, { reason: 'full' })
      const d = await describeBoard(url, fetchOpts)
      if (await store.isBlocked(d.authority))
        throw new WireError('forbidden', `${d.authority} is blocked on this aggregator`, { reason: 'blocked' })
      const done = await store.upsert(d)
      if (!done)
        throw new WireError('invalid_request', `${d.authority} is already registered under another URL`, { reason: 'authority_taken' })
      log.info({ authority: d.authority, created: done.created }, 'board registered')
      return done
    },

    /** One periodic check of a board: up again, still failing, down, or dropped. */
    async recheck(b: RegisteredBoard): Promise<BoardStatus> {
      try {
        const d = await describeBoard(b.url, fetchOpts)
        if (d.authority !== b.authority)
          throw new WireError('invalid_request', `now serves ${d.authority}`, { reason: 'authority_changed' })
        await store.markOk(d)
        return 'up'
      } catch (err) {
        const reason = err instanceof WireError ? String(err.details?.reason ?? err.code) : 'error'
        const state = await store.markFailed(b.authority, reason, a.downAfterSeconds, a.dropAfterSeconds)
        if (state !== b.status) log.warn({ authority: b.authority, reason, state }, 'board check failed')
        return state
      }
    },
  }
}
export type Registry = ReturnType<typeof registry>
