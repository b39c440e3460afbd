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

export function addressPolicy(allow: AllowHosts): AddressPolicy {
  const cidrs = allow.cidrs.map((c) => ipaddr.parseCIDR(c))
  const hosts = new Set(allow.hosts)
  return {
    addressAllowed(address) {
      if (!isIP(address)) return false
      let ip = ipaddr.parse(address)
      // @NOTE ::ffff:127.0.0.1 reaches 127.0.0.1: judge the IPv4 address inside
      if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress()) ip = (ip as ipaddr.IPv6).toIPv4Address()
      if (cidrs.some(([net, bits]) => net.kind() === ip.kind() && ip.match([net, bits] as never))) return true
      return ip.range() === 'unicast'
    },
    hostAllowed: (host) => hosts.has(host.toLowerCase().replace(/^\[|\]$/g, '')),
  }
}
