import type { Signal } from '../domain/index.js'

/** Tells readers to refresh one signal (removed, pinned, unpinned) or the board metadata. */
export type Invalidation = { kind: 'signal'; id: string } | { kind: 'board' } | { kind: 'rules' }

/**
 * Wake-ups only: a message carries the new head or what to refresh, never data. Readers read data
 * from PostgreSQL; a lost message costs latency (the reader's fallback timer), never correctness.
 * Every message reaches this process's own listeners first, synchronously, then the other
 * processes of the board (Redis and/or LISTEN/NOTIFY); a message seen twice is delivered once.
 * The one exception stays in the process: its own listeners also get the signals a wake-up's
 * commit stored, so a read side here can take them in without reading them back.
 */
export interface WakeBus {
  /**
   * Delivers `head` to this process's listeners before returning, then publishes it. `committed`:
   * the batch whose commit made `head` (in seq order, ending at it), for this process's listeners only.
   */
  publishWake(head: number, committed?: readonly Signal[]): void
  /** Resolves once this process's own listeners have settled (their promises too); other processes are told without waiting. */
  publishInvalidation(m: Invalidation): Promise<void>
  /** `committed` is there only for a commit of this process (publishWake's second argument). */
  onWake(fn: (head: number, committed?: readonly Signal[]) => void): void
  /** A listener may return a promise: publishInvalidation waits for it. */
  onInvalidation(fn: (m: Invalidation) => unknown): void
  /** Called after a network path (re)connects: messages may have been lost meanwhile. */
  onResync(fn: () => void): void
  /** True while messages can flow to other processes (always for the in-process bus). */
  healthy(): boolean
  close(): Promise<void>
}

/** Distinct pollers seen in the last 60 s (recentPollers), shared by every reader of the board. */
export interface Presence {
  touch(key: string): void
  count(): Promise<number>
  close(): Promise<void>
}

export const PRESENCE_WINDOW_MS = 60_000
