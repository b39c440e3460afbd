import type { Command } from 'commander'
import { WireClient } from '../../client/src/index.js'
import { commaList } from '../../libs/shared/config/index.js'
import type { Io } from './io.js'

/** The client for a command: `--url`/`--token`/`--admin-token` over WIRE_URL/WIRE_TOKEN/WIRE_ADMIN_TOKEN. */
export function clientOf(io: Io, cmd: Command): WireClient {
  const g = cmd.optsWithGlobals<{ url?: string; token?: string; adminToken?: string }>()
  const urls = g.url ? commaList(g.url) : io.cfg.urls
  const token = g.token ?? io.cfg.token
  const adminToken = g.adminToken ?? io.cfg.adminToken
  return new WireClient({ url: urls, ...(token && { token }), ...(adminToken && { adminToken }) })
}

/** JSON for a person at a terminal (indented) or for a program (one line). */
export const printJson = (io: Io, value: unknown) => io.out(io.tty ? JSON.stringify(value, null, 2) : JSON.stringify(value))
