/** A page of GET /sw/signals, ready to send. */
export interface FeedPage {
  /** Each signal's emitted JSON, serialised once and shared by every response that carries it. */
  signals: string[]
  /** Where the follower stands: every matching signal up to here is in `signals` or was considered. */
  nextCursor: number
  /** Empty because the database scan stopped at its budget below the head: more may match past `nextCursor`, so never wait on it. */
  partial?: boolean
  /** The encoded response (reads.ts pageBody), cached so a page shared by many waiters is encoded once. */
  body?: Buffer
}

export const emptyPage = (nextCursor: number): FeedPage => ({ signals: [], nextCursor })
