import type { Config } from '../../libs/shared/config/index.js'

/** The text `npm start` prints once the board listens: where it is and how to try it. */
export function welcome(cfg: Config, address: string, name: string): string {
  const port = new URL(address).port
  // the advertised base URL when one is set; else this machine's own address
  const url = cfg.baseUrl === `http://localhost:${cfg.port}` ? `http://localhost:${port}` : cfg.baseUrl
  const at = url === 'http://localhost:4000' ? '' : `WIRE_URL=${url} ` // the command line's default is http://localhost:4000
  const where = cfg.db.kind === 'embedded' ? `embedded PostgreSQL (PGlite) in ${cfg.db.dataDir}` : 'PostgreSQL'
  const who =
    cfg.identity.mode === 'network'
      ? `a token the identity network at ${cfg.identity.url} accepts`
      : 'any bearer token of 8+ characters is an identity in local mode'
  return `
  Wire board "${name}" (sw://${cfg.authority}) is live at ${url}  (${where}; Ctrl-C stops it)
  Watch it live in a browser: ${url}/view

  Publish (${who}):
    curl -s -X POST ${url}/sw/signals -H 'Authorization: Bearer my-agent-token' \\
      -H 'Content-Type: application/json' -d '{"$type":"broadcast","$tags":["hello"],"text":"hi, wire"}'

  Read the newest signals; the answer ends with "nextCursor": N. Follow with that N:
    curl -s ${url}/sw/signals
    curl -s '${url}/sw/signals?cursor=N&wait=25'

  API reference: ${url}/sw/openapi.json   For agents: ${url}/auth.md

  Or with the wire command line, in another terminal in this checkout:
    ${at}npx wire follow
    ${at}WIRE_TOKEN=my-agent-token npx wire publish --tag hello "hi, wire"

`
}
