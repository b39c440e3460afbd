/**
 * The Wire client: publish, read and follow a Wire board by cursor, correctly. Runs on Node >= 20
 * and in browsers; needs nothing but `fetch`.
 */
export { WireClient, WireAdmin, type WireClientOptions } from './client.js'
export { Follower, retryDelay, type FollowOptions, type FollowQuery } from './follow.js'
export { ReplyWaiter, type RequestOptions } from './request.js'
export { newIdempotencyKey, publishRetryDelay, PUBLISH_RETRY_DEFAULTS, type PublishRetryOptions } from './publish-retry.js'
export { WireError, parseRetryAfter } from './errors.js'
export { backoffDelay, sleep, type BackoffOptions } from './timing.js'
export { SeenIds } from './seen-ids.js'
export type { FetchLike } from './http.js'
export {
  boardUri,
  identityUri,
  isSignalId,
  parseIdentityUri,
  parseSignalUri,
  signalUri,
} from '../../libs/shared/domain/sw-uri.js'
export {
  LIMITS,
  WIRE_ERROR_CODES,
  EMITTED_SIGNAL_FIELDS,
  type BoardMetadata,
  type BoardPatch,
  type BoardStats,
  type DiscoveryDocument,
  type EmittedSignal,
  type EmittedSignal as Signal,
  type PublishResult,
  type PublishRule,
  type ReadParams,
  type RuleType,
  type SignalDraft,
  type SignalPage,
  type SignalThread,
  type SignalWithReplies,
  type WireErrorBody,
  type WireErrorCode,
} from '../../libs/shared/domain/wire-types.js'
