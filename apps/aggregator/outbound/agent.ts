import { lookup as dnsLookup, type LookupAddress } from 'node:dns'
import { isIP } from 'node:net'
import { Agent } from 'undici'
import { WireError } from '../../../libs/shared/domain/index.js'
import type { AddressPolicy } from './address-policy.js'

/** The refusal every outbound path gives for an address that is not public. */
const privateAddress = (host: string) => new WireError('invalid_request', privateMessage(host), { reason: 'private_address' })

/** Says which setting opens a private host, for the operator who meant it (two local boards and an aggregator). */
export const privateMessage = (host: string) =>
  `${host} resolves to an address that is not public; to allow it on purpose, list it in AGGREGATOR_ALLOW_HOSTS (e.g. AGGREGATOR_ALLOW_HOSTS=127.0.0.1,localhost)`

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void

/**
 * A DNS lookup for net.connect that refuses non-public answers: every address the name resolves to
 * must pass, so a name cannot pair a public address with a private one and let the socket pick.
 */
function guardedLookup(policy: AddressPolicy) {
  return (hostname: string, options: { all?: boolean; family?: number }, cb: LookupCallback) => {
    dnsLookup(hostname, { all: true, family: options.family ?? 0 }, (err, addresses) => {
      if (err) return cb(err, [])
      const list = addresses as LookupAddress[]
      const open = policy.hostAllowed(hostname)
      if (list.length === 0 || (!open && list.some((a) => !policy.addressAllowed(a.address)))) {
        // a plain error with a code of ours: undici may wrap it; fetch-json and the proxy map it back
        return cb(Object.assign(new Error(`${hostname} resolves to an address that is not public`), { code: 'EWIRE_PRIVATE_ADDRESS' }), [])
      }
      if (options.all) return cb(null, list)
      cb(null, list[0]!.address, list[0]!.family)
    })
  }
}

/** An IP literal never reaches the lookup: check it (and any host) before a request leaves. */
export function checkHost(policy: AddressPolicy, url: URL): void {
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new WireError('invalid_request', 'the URL must be http(s)', { reason: 'not_http' })
  const host = url.hostname.replace(/^\[|\]$/g, '')
  if (isIP(host) && !policy.hostAllowed(host) && !policy.addressAllowed(host)) throw privateAddress(host)
}

export interface OutboundOptions {
  /** Connections per board origin. */
  connections: number
  connectTimeoutMs: number
}

/** One undici Agent for every outbound request: a pool per board origin, each socket's address checked after DNS. */
export function outboundAgent(policy: AddressPolicy, o: OutboundOptions): Agent {
  return new Agent({
    connections: o.connections,
    connect: { lookup: guardedLookup(policy) as never, timeout: o.connectTimeoutMs },
    keepAliveTimeout: 30_000,
    headersTimeout: 45_000, // a long-poll answers within 25 s of waiting
    bodyTimeout: 45_000,
  })
}
