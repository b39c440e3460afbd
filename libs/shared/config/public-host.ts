import { isIP } from 'node:net'

/**
 * A loopback name or an IP address is nobody's TLS certificate: links to it default to http://
 * (PUBLIC_WIRE_HOST=127.0.0.1:4000 would otherwise advertise an https:// URL that nothing serves).
 * Anything else is a public name: a board others are meant to reach.
 */
export function isLocalOrIp(authority: string): boolean {
  const host = authority.replace(/:\d+$/, '')
  return host === 'localhost' || host.endsWith('.localhost') || isIP(host) !== 0
}

/** What the check reads of a loaded configuration (a structural slice of `Config`). */
export interface PublicFacts {
  authority: string
  baseUrl: string
  db: { kind: 'postgres' | 'embedded' }
  redisUrl: string | undefined
  identity: { mode: 'local' | 'network' }
  http: { trustProxy: boolean | number | string[] }
  secrets: { adminToken: string | undefined; fingerprintSecret: string | undefined }
}

export interface UnsetSetting {
  setting: string
  why: string
}

/**
 * Every ★ setting (the README's "set these yourself") still unset on a board with a public name,
 * and what goes wrong without it. Empty on a loopback or IP address: a board on your own machine
 * needs none of them. `wire check-config` and the start banner print this list.
 */
export function unsetForPublicHost(cfg: PublicFacts): UnsetSetting[] {
  if (isLocalOrIp(cfg.authority)) return []
  const out: UnsetSetting[] = []
  if (cfg.db.kind === 'embedded')
    out.push({
      setting: 'DATABASE_URL',
      why: 'the embedded database serves one process and suits trials and small private boards; a public board belongs on PostgreSQL',
    })
  if (cfg.db.kind === 'postgres' && cfg.identity.mode === 'local' && !cfg.secrets.fingerprintSecret)
    out.push({
      setting: 'FINGERPRINT_SECRET',
      why: 'identities are keyed by DATABASE_URL, so a new database password or host changes every identity on the board',
    })
  if (!cfg.secrets.adminToken)
    out.push({ setting: 'SERVER_ADMIN_TOKEN', why: 'the admin API is off (501): nobody can remove a signal, pin, or block an identity' })
  if (cfg.http.trustProxy === false)
    out.push({
      setting: 'TRUST_PROXY',
      why: cfg.baseUrl.startsWith('https:')
        ? `${cfg.baseUrl} is HTTPS, so a proxy in front terminates TLS (Wire speaks plain HTTP): without TRUST_PROXY every client shares the proxy's address for rate limits`
        : 'behind a proxy or load balancer every client shares its address for rate limits: set the hop count (1) or its addresses',
    })
  if (cfg.db.kind === 'postgres' && !cfg.redisUrl)
    out.push({
      setting: 'REDIS_URL',
      why: 'with more than one process, rate limits and long-poll caps count per process and wake-ups wait for LISTEN/NOTIFY',
    })
  return out
}

/** The list as printed: a heading naming the host, then one aligned line per setting; empty when nothing is missing. */
export function formatUnsetForPublicHost(cfg: PublicFacts): string[] {
  const unset = unsetForPublicHost(cfg)
  if (unset.length === 0) return []
  const width = Math.max(...unset.map((u) => u.setting.length))
  return [
    `${cfg.authority} is a public name: set these before others use the board (★ in the README's settings):`,
    ...unset.map((u) => `  ${u.setting.padEnd(width)}  ${u.why}`),
  ]
}
