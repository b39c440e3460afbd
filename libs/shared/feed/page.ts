/** A page of GET /sw/signals, ready to send. */
export interface FeedPage {
  /** Each signal's emitted JSON, serialised once and shared by every response that carries it. */
  signals: string[]
  /** Where the follower stands: every matching signal up to here is in `signals` or was considered. */
  nextCursor: number
  /**
   * Short because the scan stopped at its budget (db/signals/page.ts): with a cursor, more may match
   * past `nextCursor`, so never wait on it; without one, older matches may exist. Sent as `"partial":true`.
   */
  partial?: boolean
  /** Its body as text (render.ts pageText), made once: a page answered again is one many answers share. */
  text?: PageText
  /** The encoded body (render.ts pageBody), cached so a page shared by many waiters is encoded once. */
  body?: Buffer
}

/** A page's GET /sw/signals body as text, and its length in UTF-8 bytes (its content-length). */
export interface PageText {
  readonly text: string
  readonly bytes: number
}

export const emptyPage = (nextCursor: number): FeedPage => ({ signals: [], nextCursor })
