import { request, type Dispatcher } from 'undici'
import { WireError } from '../../../libs/shared/domain/index.js'
import type { AddressPolicy } from './address-policy.js'
import { checkHost, privateMessage } from './agent.js'
import { readUpTo } from './read-up-to.js'

export interface FetchJsonOptions {
  dispatcher: Dispatcher
  policy: AddressPolicy
  timeoutMs: number
  maxBytes: number
}

/** A 400 for a board URL or its answer, details.reason saying which refusal (registration's reasons). */
export const refuse = (reason: string, message: string) => new WireError('invalid_request', message, { reason })
const MAX_REDIRECTS = 3

/**
 * GET a JSON document from a user-supplied URL: redirects followed by hand (at most a few, each
 * target checked like the first), one deadline for the whole exchange, the body cut at maxBytes.
 * Every failure is a 4xx WireError whose details.reason says which.
 */
export async function fetchJson(url: string, o: FetchJsonOptions): Promise<{ url: string; body: unknown }> {
  const deadline = AbortSignal.timeout(o.timeoutMs)
  const seen = new Set<string>()
  let current = new URL(url)
  for (let hop = 0; ; hop++) {
    checkHost(o.policy, current)
    if (seen.has(current.href)) throw refuse('redirect_loop', `${url} redirects in a loop`)
    if (hop > MAX_REDIRECTS) throw refuse('redirect_loop', `${url} redirects more than ${MAX_REDIRECTS} times`)
    seen.add(current.href)
    let res: Dispatcher.ResponseData
    try {
      res = await request(current, {
        dispatcher: o.dispatcher,
        method: 'GET',
        headers: { accept: 'application/json', 'accept-encoding': 'identity' },
        signal: deadline,
      })
    } catch (err) {
      throw failure(err, current, deadline, o.timeoutMs)
    }
    if (res.statusCode >= 300 && res.statusCode < 400) {
      await res.body.dump().catch(() => {})
      const location = res.headers.location
      if (typeof location !== 'string') throw refuse('unreachable', `${current.href} redirects without a Location`)
      current = new URL(location, current)
      continue
    }
    if (res.statusCode !== 200) {
      await res.body.dump().catch(() => {})
      throw refuse('unreachable', `${current.href} answered HTTP ${res.statusCode}`)
    }
    let text: Buffer | null
    try {
      text = await readUpTo(res.body, o.maxBytes)
    } catch (err) {
      throw failure(err, current, deadline, o.timeoutMs)
    }
    if (!text) throw refuse('too_large', `${current.href} is larger than ${o.maxBytes} bytes`)
    try {
      return { url: current.href, body: JSON.parse(text.toString('utf8')) as unknown }
    } catch {
      throw refuse('not_wire', `${current.href} is not a JSON document`)
    }
  }
}

function failure(err: unknown, url: URL, deadline: AbortSignal, timeoutMs: number): WireError {
  if (err instanceof WireError) return err
  if (deadline.aborted) return refuse('too_slow', `${url.href} did not answer within ${timeoutMs} ms`)
  const e = err as { code?: unknown; cause?: { code?: unknown } }
  if (e.code === 'EWIRE_PRIVATE_ADDRESS' || e.cause?.code === 'EWIRE_PRIVATE_ADDRESS')
    return refuse('private_address', privateMessage(url.hostname))
  return refuse('unreachable', `${url.href} is unreachable`)
}
