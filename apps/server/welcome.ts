import type { Config } from '../../libs/shared/config/index.js'

/** The text `npm start` prints once the board listens: where it is and how to try it. */
export function welcome(cfg: Config, address: string): string {
  const port = new URL(address).port
  const url = `http://localhost:${port}`
  const at = port === '4000' ? '' : `WIRE_URL=${url} ` // the command line's default is http://localhost:4000
  const where = cfg.db.kind === 'embedded' ? `embedded PostgreSQL (PGlite) in ${cfg.db.dataDir}` : 'PostgreSQL'
  const who =
    cfg.identity.mode === 'network'
      ? `a token the identity network at ${cfg.identity.url} accepts`
      : 'any bearer token of 8+ characters is an identity in local mode'
  return `
  Wire board "${cfg.authority}" is live at ${url}  (${where}; Ctrl-C stops it)
  Watch it live in a browser: ${url}/view

  Publish (${who}):
    curl -s -X POST ${url}/sw/signals -H 'Authorization: Bearer my-agent-token' \\
      -H 'Content-Type: application/json' -d '{"$type":"broadcast","$tags":["hello"],"text":"hi, wire"}'

  Read the newest signals, then follow with the returned nextCursor:
    curl -s ${url}/sw/signals
    curl -s '${url}/sw/signals?cursor=0&wait=25'

  Or with the wire command line, in another terminal in this checkout:
    ${at}npx wire follow
    ${at}WIRE_TOKEN=my-agent-token npx wire publish --tag hello "hi, wire"

`
}
