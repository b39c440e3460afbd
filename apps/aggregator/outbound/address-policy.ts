import { isIP } from 'node:net'
import ipaddr from 'ipaddr.js'

export interface AllowHosts {
  hosts: string[]
  cidrs: string[]
}

/** Which addresses the aggregator may connect to: public unicast only, plus what AGGREGATOR_ALLOW_HOSTS opens. */
export interface AddressPolicy {
  /** A resolved address (v4, v6 or IPv4-mapped v6) may be reached. */
  addressAllowed(address: string): boolean
  /** A host name listed in AGGREGATOR_ALLOW_HOSTS may resolve to anything. */
  hostAllowed(host: string): boolean
}

const NAT64_LOCAL = ipaddr.parseCIDR('64:ff9b:1::/48')

/**
 * The IPv4 address an IPv6 address carries in its last 32 bits, where it is one of the forms that
 * reach or name it: IPv4-mapped (::ffff:0:0/96), IPv4-compatible (::/96, `[::127.0.0.1]`), NAT64
 * (64:ff9b::/96 and the local-use 64:ff9b:1::/48). 6to4 and Teredo are their own ranges (not unicast).
 */
function embeddedIPv4(ip: ipaddr.IPv6): ipaddr.IPv4 | null {
  const p = ip.parts
  const low = () => new ipaddr.IPv4([p[6]! >> 8, p[6]! & 0xff, p[7]! >> 8, p[7]! & 0xff])
  if (ip.isIPv4MappedAddress()) return ip.toIPv4Address()
  if (p.slice(0, 6).every((x) => x === 0) && !(p[6] === 0 && p[7]! <= 1)) return low() // :: and ::1 stay themselves
  if (ip.range() === 'rfc6052' || ip.match(NAT64_LOCAL)) return low()
  return null
}

export function addressPolicy(allow: AllowHosts): AddressPolicy {
  const cidrs = allow.cidrs.map((c) => ipaddr.parseCIDR(c))
  const hosts = new Set(allow.hosts)
  return {
    addressAllowed(address) {
      if (!isIP(address)) return false
      let ip = ipaddr.parse(address)
      // @NOTE ::ffff:127.0.0.1 reaches 127.0.0.1: judge the IPv4 address inside; so for the other forms that carry one
      if (ip.kind() === 'ipv6') ip = embeddedIPv4(ip as ipaddr.IPv6) ?? ip
      if (cidrs.some(([net, bits]) => net.kind() === ip.kind() && ip.match([net, bits] as never))) return true
      return ip.range() === 'unicast'
    },
    hostAllowed: (host) => hosts.has(host.toLowerCase().replace(/^\[|\]$/g, '')),
  }
}
