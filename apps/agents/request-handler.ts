import type { SendMessageRequest } from '@a2a-js/sdk'
import { RequestMalformedError } from '@a2a-js/sdk/errors'
import { DefaultRequestHandler, type ServerCallContext } from '@a2a-js/sdk/server'

/** What a client-chosen id may hold: printable ASCII, so nothing the SDK prints of it can forge a log line. */
const ID = /^[\x21-\x7e]{1,256}$/

/**
 * The SDK's request handler with message/send bounded to its request:
 * - always blocking: `returnImmediately` (1.0) and `blocking: false` (0.3) are ignored, so a task's
 *   work (a long-poll read) never goes on after its answer was sent; the answer is the finished task,
 *   which the protocol allows;
 * - `referenceTaskIds` are dropped (no skill uses them): the SDK would look each one up and print
 *   every unknown one to the console;
 * - message, task and context ids must be printable ASCII of at most 256 characters.
 */
export class WireRequestHandler extends DefaultRequestHandler {
  override async sendMessage(params: SendMessageRequest, context: ServerCallContext) {
    const m = params.message
    for (const [name, v] of [
      ['messageId', m?.messageId],
      ['taskId', m?.taskId],
      ['contextId', m?.contextId],
    ] as const)
      if (v && !ID.test(v)) throw new RequestMalformedError(`message.${name} must be 1 to 256 printable ASCII characters`)
    return super.sendMessage(
      {
        ...params,
        ...(params.configuration && { configuration: { ...params.configuration, returnImmediately: false } }),
        ...(m && { message: { ...m, referenceTaskIds: [] } }),
      },
      context,
    )
  }
}
