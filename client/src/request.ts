import type { EmittedSignal, PublishResult } from '../../libs/shared/domain/wire-types.js'
import type { FollowOptions, FollowQuery } from './follow.js'
import { deadline } from './timing.js'

/** What a reply waiter follows through (WireClient). */
export interface Follows {
  follow(query: FollowQuery, o: FollowOptions): AsyncIterable<EmittedSignal>
}

export interface RequestOptions extends Pick<FollowOptions, 'onRetry' | 'wait' | 'backoff'> {
  /** How long to wait for replies, ms. The iteration then ends quietly. */
  timeout: number
  signal?: AbortSignal
  idempotencyKey?: string
}

/**
 * The replies to a published signal, as they arrive, until the timeout. On a Wire server the
 * follow starts at the publish's own feed position (`cursor`) with the `ref` filter, so no reply
 * can slip between publishing and listening.
 */
export class ReplyWaiter implements AsyncIterable<EmittedSignal> {
  /** The signal that was published. */
  readonly signal: EmittedSignal
  /** Its feed position, when the server reports it. */
  readonly cursor: number | undefined
  readonly #client: Follows
  readonly #o: RequestOptions

  constructor(client: Follows, published: PublishResult, o: RequestOptions) {
    this.#client = client
    this.signal = published.signal
    this.cursor = typeof published.cursor === 'number' ? published.cursor : undefined
    this.#o = o
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<EmittedSignal, void, undefined> {
    const { timeout, signal, idempotencyKey: _, ...follow } = this.#o
    const d = deadline(signal, timeout)
    try {
      const id = this.signal.id
      const replies = this.#client.follow(
        { ref: id },
        { ...follow, signal: d.signal, ...(this.cursor === undefined ? {} : { cursor: this.cursor }) },
      )
      // a server without the ref filter sends everything: keep the replies only
      for await (const s of replies) if (s.refId === id) yield s
    } finally {
      d.dispose()
    }
  }
}
