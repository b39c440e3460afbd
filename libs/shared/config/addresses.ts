import { isIP } from 'node:net'

// The address lists settings hold (TRUST_PROXY, AGENTS_ALLOWED_HOSTS, AGGREGATOR_ALLOW_HOSTS), parsed
// to a value or to the entries that are not what the list takes.
export type Parsed<T> = { ok: true; value: T } | { ok: false; bad: string[] }

const HOST_NAME = /^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$/
/** A comma-separated list: its entries trimmed, the empty ones left out. */
export const commaList = (v: string): string[] =>
  v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
const entries = (v: string, lower = true) => commaList(lower ? v.toLowerCase() : v)

/** `address` or `address/bits`: the address and its prefix (the whole address without bits); null when it is neither. */
function parseCidr(x: string): { addr: string; bits: number } | null {
  const [addr = '', bits, extra] = x.split('/')
  const family = isIP(addr)
  const most = family === 4 ? 32 : 128
  if (!family || extra !== undefined) return null
  if (bits === undefined) return { addr, bits: most }
  return /^\d{1,3}$/.test(bits) && Number(bits) <= most ? { addr, bits: Number(bits) } : null
}

/**
 * TRUST_PROXY: `0`/`false`/`off` (req.ip is the TCP peer), a hop count (`1`: one proxy in front, e.g.
 * the Gateway), `true` (trust every X-Forwarded-For hop; only behind a proxy that overwrites it), or
 * a comma-separated list of proxy addresses and CIDRs (passed on as written).
 */
export function parseTrustProxy(v: string): Parsed<boolean | number | string[]> {
  const lower = v.toLowerCase()
  if (lower === 'false' || lower === 'off') return { ok: true, value: false }
  if (lower === 'true') return { ok: true, value: true }
  if (/^\d{1,3}$/.test(v)) return { ok: true, value: Number(v) === 0 ? false : Number(v) }
  const list = entries(v, false)
  const bad = list.filter((x) => !parseCidr(x))
  return list.length === 0 || bad.length ? { ok: false, bad } : { ok: true, value: list }
}

/** AGENTS_ALLOWED_HOSTS: host names or addresses (lower-case, no port; `[::1]` loses its brackets). */
export function parseHostNames(v: string): Parsed<string[]> {
  const names = entries(v)
  const unbracketed = (x: string) => x.replace(/^\[(.*)\]$/, '$1')
  const bad = names.filter((x) => !isIP(unbracketed(x)) && !HOST_NAME.test(x))
  return bad.length ? { ok: false, bad } : { ok: true, value: names.map(unbracketed) }
}

/** AGGREGATOR_ALLOW_HOSTS: host names (exact, lower-case) and addresses or CIDRs (an address alone is its /32 or /128). */
export function parseAllowHosts(v: string): Parsed<{ hosts: string[]; cidrs: string[] }> {
  const hosts: string[] = []
  const cidrs: string[] = []
  const bad: string[] = []
  for (const x of entries(v)) {
    const cidr = parseCidr(x)
    if (cidr) cidrs.push(x.includes('/') ? x : `${cidr.addr}/${cidr.bits}`)
    else if (!x.includes('/') && HOST_NAME.test(x)) hosts.push(x)
    else bad.push(x)
  }
  return bad.length ? { ok: false, bad } : { ok: true, value: { hosts, cidrs } }
}
