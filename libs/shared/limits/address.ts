import { hash } from 'node:crypto'
import { isIPv6 } from 'node:net'
import ipaddr from 'ipaddr.js'

/** Keys already made (a follower polls with the same address again and again). Emptied when full. */
const CACHE_MAX = 10_000
const cache = new Map<string, string>()
/**
 * Longer "addresses" are keyed by their hash. Only a client-written X-Forwarded-For under
 * TRUST_PROXY=true can make one (up to a whole header), and every budget's map, the presence set
 * and the cache above are keyed by these keys: each entry stays small. An IPv6 address with a zone
 * fits (45 characters and the zone).
 */
export const ADDRESS_KEY_MAX_CHARS = 100

/**
 * The budget key of a client address (req.ip after TRUST_PROXY): an IPv4 address as it is, an
 * IPv4-mapped IPv6 address as its IPv4 address, and any other IPv6 address masked to its first
 * `ipv6PrefixBits` bits, since one subscriber usually holds a whole /64 (as ntfy's
 * visitor-prefix-bits-ipv6). Anything else (a unix socket, `unknown`) is its own key.
 */
export function addressKey(address: string, ipv6PrefixBits: number): string {
  if (address.length > ADDRESS_KEY_MAX_CHARS) return `#${hash('sha256', address, 'base64url')}`
  if (address.indexOf(':') < 0) return address // IPv4 (or no IP at all): as it is; every poll comes here, so no parse

  const cached = `${ipv6PrefixBits}/${address}`
  const hit = cache.get(cached)
  if (hit !== undefined) return hit
  const key = isIPv6(address) ? v6Key(address, ipv6PrefixBits) : address
  if (cache.size >= CACHE_MAX) cache.clear()
  cache.set(cached, key)
  return key
}

function v6Key(address: string, bits: number): string {
  const v6 = ipaddr.IPv6.parse(address.split('%')[0]!) // a zone index names an interface, not a client
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().toString()
  if (bits >= 128) return v6.toNormalizedString()
  const parts = v6.toByteArray()
  for (let i = 0; i < 16; i++) {
    const keep = Math.max(0, Math.min(8, bits - i * 8))
    parts[i] = parts[i]! & (0xff << (8 - keep))
  }
  return `${ipaddr.fromByteArray(parts).toString()}/${bits}`
}
