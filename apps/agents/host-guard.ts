import type { FastifyReply, FastifyRequest } from 'fastify'
import { rpcError } from '../../libs/shared/http/index.js'

/** Loopback names a board on this machine is reached by. */
const LOOPBACK = ['localhost', '127.0.0.1', '::1']

/** What the guard needs of the config: the board's public name and URL, and the names a setting adds. */
export interface HostGuardConfig {
  readonly authority: string
  readonly baseUrl: string
  readonly agents: { readonly allowedHosts: readonly string[] }
}

/**
 * DNS-rebinding protection for /mcp and /a2a (the MCP specification's security guidance): a page
 * on evil.example whose name resolves to 127.0.0.1 makes the browser send `Host: evil.example`
 * and `Origin: http://evil.example` to a board on localhost. A request whose Host or Origin names
 * neither the board's public name, nor loopback, nor a name of AGENTS_ALLOWED_HOSTS is refused
 * with 403 before any SDK sees it. Names are compared without the port; a request without
 * Origin (every non-browser client) is checked by its Host alone.
 */
export function hostGuard(cfg: HostGuardConfig) {
  const named = [hostnameOf(cfg.authority), hostnameOfUrl(cfg.baseUrl)].filter((x): x is string => x !== undefined)
  const allowed = new Set([...LOOPBACK, ...named, ...cfg.agents.allowedHosts])
  return async (req: FastifyRequest, reply: FastifyReply) => {
    const host = req.headers.host
    if (host !== undefined && !allowed.has(hostnameOf(host) ?? '')) return refuse(reply, 'Host')
    const origin = req.headers.origin
    if (origin !== undefined && !allowed.has(hostnameOfUrl(origin) ?? '')) return refuse(reply, 'Origin')
  }
}

function refuse(reply: FastifyReply, header: 'Host' | 'Origin') {
  return reply
    .code(403)
    .send(
      rpcError(
        -32000,
        `Forbidden: the ${header} header names a host this board does not answer to (DNS-rebinding protection; see AGENTS_ALLOWED_HOSTS)`,
        { code: 'forbidden' },
      ),
    )
}

/** `host`, `host:port`, `[v6]` or `[v6]:port` → the lower-case host name without brackets, or undefined. */
function hostnameOf(authority: string): string | undefined {
  const a = authority.trim().toLowerCase()
  if (a.startsWith('[')) {
    const end = a.indexOf(']')
    return end > 1 ? a.slice(1, end) : undefined
  }
  const colon = a.indexOf(':')
  const name = colon === -1 ? a : a.slice(0, colon)
  return name === '' ? undefined : name
}

function hostnameOfUrl(url: string): string | undefined {
  if (url.length > 2048) return undefined
  try {
    const { hostname } = new URL(url) // "[::1]" for an IPv6 address
    return hostname === '' ? undefined : hostnameOf(hostname)
  } catch {
    return undefined
  }
}
