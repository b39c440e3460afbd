/** Tells readers to refresh one signal (removed, pinned, unpinned) or the board metadata. */
export type Invalidation = { kind: 'signal'; id: string } | { kind: 'board' } | { kind: 'rules' }

/**
 * Wake-ups only: a message carries the new head or what to refresh, never data. Readers read data
 * from PostgreSQL; a lost message costs latency (the reader's fallback timer), never correctness.
 */
export interface WakeBus {
  publishWake(head: number): void
  publishInvalidation(m: Invalidation): void
  onWake(fn: (head: number) => void): void
  onInvalidation(fn: (m: Invalidation) => void): void
  /** Called after the subscription (re)connects: messages may have been lost meanwhile. */
  onResync(fn: () => void): void
  /** True while messages can flow (always for the in-process bus). */
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
