/** One way of reaching the board's other processes: Redis pub/sub or PostgreSQL LISTEN/NOTIFY. */
export interface BusPath {
  readonly name: 'redis' | 'pg'
  sendWake(text: string): void
  sendInvalidation(text: string): void
  /** True while this path can both send and receive. */
  healthy(): boolean
  close(): Promise<void>
}

/** Where a path hands what it receives (still encoded: the bus parses and de-duplicates). */
export interface PathSink {
  wake(text: string, path: BusPath['name']): void
  invalidation(text: string, path: BusPath['name']): void
  /** The path (re)connected after a loss: messages may have been missed. */
  resync(): void
}
