import type { Signal } from '../domain/index.js'
import type { Logger } from '../log/index.js'
import type { Invalidation } from './types.js'

/** Remembers the last `max` keys seen; `add` says whether the key is new. */
function recentKeys<K>(max: number) {
  const seen = new Set<K>()
  return {
    add(key: K): boolean {
      if (seen.has(key)) return false
      seen.add(key)
      if (seen.size > max) seen.delete(seen.values().next().value as K)
      return true
    },
  }
}

/**
 * This process's listeners. Each message is delivered once, synchronously, whichever path brought
 * it first: a wake by its head, an invalidation by its id.
 * @NOTE duplicates are recognised by an exact match with a recently seen head, not by "≤ the
 * highest head seen": one bogus head (a forged message, a board whose database was reset) would
 * otherwise silence every later wake-up. Readers keep the maximum themselves, so an older head
 * delivered late costs nothing.
 */
export function localListeners(log: Logger, remember = 1024) {
  const wake: Array<(head: number, committed?: readonly Signal[]) => void> = []
  const inval: Array<(m: Invalidation) => unknown> = []
  const resync: Array<() => void> = []
  const heads = recentKeys<number>(remember)
  const ids = recentKeys<string>(remember)

  const each = <A extends unknown[]>(fns: Array<(...a: A) => unknown>, ...args: A): Array<Promise<unknown>> =>
    fns.flatMap((fn) => {
      try {
        const r = fn(...args)
        return r instanceof Promise ? [r.catch((err: unknown) => log.warn({ err }, 'bus listener failed'))] : []
      } catch (err) {
        log.warn({ err }, 'bus listener failed')
        return []
      }
    })

  return {
    /** False (and nothing delivered) when this head was delivered already. */
    wake(head: number, committed?: readonly Signal[]): boolean {
      if (!heads.add(head)) return false
      each(wake, head, committed)
      return true
    },
    /** Null when this message id was delivered already; else settles with every listener. */
    invalidation(m: Invalidation, id: string): Promise<void> | null {
      if (!ids.add(id)) return null
      return Promise.all(each(inval, m)).then(() => {})
    },
    resync: () => void each(resync),
    onWake: (fn: (head: number, committed?: readonly Signal[]) => void) => void wake.push(fn),
    onInvalidation: (fn: (m: Invalidation) => unknown) => void inval.push(fn),
    onResync: (fn: () => void) => void resync.push(fn),
    clear() {
      wake.length = 0
      inval.length = 0
      resync.length = 0
    },
  }
}
