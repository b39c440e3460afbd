import { request, type Dispatcher } from 'undici'
import { WireError } from '../../../libs/shared/domain/index.js'
import type { AddressPolicy } from './address-policy.js'
import { checkHost, privateMessage } from './agent.js'

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
    const text = await readCapped(res.body, o.maxBytes, current, deadline, o.timeoutMs)
    try {
      return { url: current.href, body: JSON.parse(text) as unknown }
    } catch {
      throw refuse('not_wire', `${current.href} is not a JSON document`)
    }
  }
}

async function readCapped(
  body: Dispatcher.ResponseData['body'],
  max: number,
  url: URL,
  deadline: AbortSignal,
  timeoutMs: number,
): Promise<string> {
  const chunks: Buffer[] = []
  let size = 0
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      size += chunk.length
      if (size > max) {
        throw refuse('too_large', `${url.href} is larger than ${max} bytes`)
      }
      chunks.push(chunk)
    }
  } catch (err) {
    throw failure(err, url, deadline, timeoutMs)
  }
  return Buffer.concat(chunks).toString('utf8')
}

function failure(err: unknown, url: URL, deadline: AbortSignal, timeoutMs: number): WireError {
  if (err instanceof WireError) return err
  if (deadline.aborted) return refuse('too_slow', `${url.href} did not answer within ${timeoutMs} ms`)
  const e = err as { code?: unknown; cause?: { code?: unknown } }
  if (e.code === 'EWIRE_PRIVATE_ADDRESS' || e.cause?.code === 'EWIRE_PRIVATE_ADDRESS')
    return refuse('private_address', privateMessage(url.hostname))
  return refuse('unreachable', `${url.href} is unreachable`)
}
