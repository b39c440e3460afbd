import { z } from 'zod'
import { fetchJson, refuse, type FetchJsonOptions } from '../outbound/fetch-json.js'

/** What registration records of a board, from its discovery document. */
export interface BoardDescription {
  authority: string
  url: string
  name: string
  description: string | null
  limits: Record<string, number>
  features: string[]
}

const Discovery = z.object({
  protocol: z.string(),
  version: z.string(),
  subwires: z
    .array(
      z.object({
        authority: z
          .string()
          .min(1)
          .max(255)
          .regex(/^[A-Za-z0-9.:[\]-]+$/),
        name: z.string().max(200),
        description: z.string().max(2000).nullable().optional(),
      }),
    )
    .min(1),
  features: z.array(z.string().max(64)).max(64).default([]),
  limits: z.record(z.string(), z.number()).default({}),
})

/** A board's base URL as given: http(s), no query or fragment, no credentials, no trailing slash. */
export function normaliseBoardUrl(raw: unknown): string {
  if (typeof raw !== 'string' || raw.length > 2000) throw refuse('invalid_url', 'url must be an http(s) URL')
  let u: URL
  try {
    u = new URL(raw)
  } catch {
    throw refuse('invalid_url', 'url must be an http(s) URL')
  }
  if ((u.protocol !== 'http:' && u.protocol !== 'https:') || u.username || u.password || u.search || u.hash)
    throw refuse('invalid_url', 'url must be an http(s) URL without credentials, query or fragment')
  return (u.origin + u.pathname).replace(/\/+$/, '')
}

/** Names under /sw/ or at the aggregator's root that an authority may not take (`/sw/sw/…`, `/sw/registry`). */
const RESERVED = new Set(['sw', 'registry', 'search', 'mcp', 'view', 'metrics', 'healthz', 'readyz', 'openapi.json', '.well-known'])

/**
 * A board's authority is its URL's host (and port), so a token sent to `{aggregator}/sw/{authority}`
 * goes to the server that name belongs to; no empty label (`..`), no reserved name.
 */
function checkAuthority(authority: string, url: string): void {
  const a = authority.toLowerCase()
  const host = a.startsWith('[') ? a.slice(0, a.indexOf(']') + 1) : a.split(':')[0]!
  if (RESERVED.has(a) || RESERVED.has(host) || (!host.startsWith('[') && host.split('.').some((l) => l === '')))
    throw refuse(
      'invalid_authority',
      `${url} names ${a.slice(0, 100)} as its authority, which is not a host name this aggregator can serve`,
    )
  const u = new URL(url)
  const mine = [u.host, ...(u.port === '' ? [`${u.hostname}:${u.protocol === 'https:' ? 443 : 80}`] : [])]
  if (!mine.includes(a))
    throw refuse('authority_mismatch', `${url} names ${a.slice(0, 100)} as its authority; it must be the URL's host, ${u.host}`)
}

/** Fetches `{url}/.well-known/wire` and accepts protocol `wire`, version `1` only. */
export async function describeBoard(url: string, o: FetchJsonOptions): Promise<BoardDescription> {
  const { body } = await fetchJson(`${url}/.well-known/wire`, o)
  const protocol = (body as { protocol?: unknown } | null)?.protocol
  if (protocol !== 'wire') throw refuse('not_wire', `${url} does not serve a wire discovery document`)
  const version = (body as { version?: unknown }).version
  if (version !== '1')
    throw refuse('wrong_version', `${url} speaks wire version ${String(version).slice(0, 20)}; this aggregator speaks version 1`)
  const parsed = Discovery.safeParse(body)
  if (!parsed.success) throw refuse('not_wire', `${url}: the discovery document is malformed (${parsed.error.issues[0]?.path.join('.')})`)
  const board = parsed.data.subwires[0]!
  checkAuthority(board.authority, url)
  return {
    authority: board.authority.toLowerCase(),
    url,
    name: board.name,
    description: board.description ?? null,
    limits: parsed.data.limits,
    features: parsed.data.features,
  }
}
