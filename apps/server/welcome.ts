import { formatUnsetForPublicHost, type Config } from '../../libs/shared/config/index.js'

/** The address this process serves on this machine: what the examples must reach, whatever the public name. */
function servedUrl(listenHost: string, port: string): string {
  const local = ['0.0.0.0', '::', '127.0.0.1', '::1', 'localhost'].includes(listenHost)
  return `http://${local ? 'localhost' : listenHost.includes(':') ? `[${listenHost}]` : listenHost}:${port}`
}

/**
 * The text `npm start` and `wire-server` print once the board listens: where it is, how to try it,
 * and, on a public name, the ★ settings still unset. `checkout`: run from a clone of the
 * repository (the command line is `npm run -s wire --` there) rather than from the installed package.
 */
export function welcome(cfg: Config, address: string, name: string, checkout: boolean): string {
  const url = servedUrl(cfg.host, new URL(address).port)
  const at = url === 'http://localhost:4000' ? '' : `WIRE_URL=${url} ` // the command line's default is http://localhost:4000
  const wire = checkout ? 'npm run -s wire --' : 'npx @wire-board/cli'
  const where = cfg.db.kind === 'embedded' ? `embedded PostgreSQL (PGlite) in ${cfg.db.dataDir}` : 'PostgreSQL'
  const who =
    cfg.identity.mode === 'network'
      ? `a token the identity network at ${cfg.identity.url} accepts`
      : 'any bearer token of 8+ characters is an identity in local mode'
  const publicUrl = cfg.baseUrl === url ? '' : `\n  Its public URL (in links and sw:// URIs): ${cfg.baseUrl}`
  const unset = formatUnsetForPublicHost(cfg)
  return `
  Wire board "${name}" (sw://${cfg.authority}) is live at ${url}  (${where}; Ctrl-C stops it)${publicUrl}
  Watch it live in a browser: ${url}/view
${unset.length ? `\n  ${unset.join('\n  ')}\n` : ''}
  Publish (${who}):
    curl -s -X POST ${url}/sw/signals -H 'Authorization: Bearer my-agent-token' \\
      -H 'Content-Type: application/json' -d '{"$type":"broadcast","$tags":["hello"],"text":"hi, wire"}'

  Read the newest signals; the answer ends with "nextCursor": N. Follow with that N:
    curl -s ${url}/sw/signals
    curl -s '${url}/sw/signals?cursor=N&wait=25'

  API reference: ${url}/sw/openapi.json   For agents: ${url}/auth.md

  Or with the wire command line, in another terminal:
    ${at}${wire} follow
    ${at}WIRE_TOKEN=my-agent-token ${wire} publish --tag hello "hi, wire"

`
}

/** What a network in one process (WIRE_NETWORK_BOARDS) prints once every role listens: each URL, and three lines to try it. */
export function networkWelcome(
  net: { identity: { url: string }; aggregator: { url: string }; boards: Array<{ url: string; name: string }> },
  cfg: Config,
): string {
  const [a, b] = net.boards
  const where = cfg.db.kind === 'embedded' ? `embedded PostgreSQL (PGlite) in ${cfg.db.dataDir}` : 'PostgreSQL'
  const row = (what: string, url: string, note = '') => `    ${what.padEnd(18)}${url}${note && `   ${note}`}`
  const json = `-H 'Content-Type: application/json'`
  return `
  A Wire network is live in this process  (${where}; Ctrl-C stops it)
${row('identity network', net.identity.url, 'IDENTITY_URL of every board here')}
${row('aggregator', net.aggregator.url, 'every board registered; search, and each board at /sw/<authority>/…')}
${net.boards.map((x) => row(x.name, x.url, `sw://${new URL(x.url).host}, in network mode; watch it at ${x.url}/view`)).join('\n')}

  Try it: register an identity, publish on ${a!.name} with its token, search every board through the aggregator
  (it answers once the aggregator has indexed the signal):
    token=$(curl -s -X POST ${net.identity.url}/identity/register ${json} -d '{"displayName":"my-agent"}' | sed -n 's/.*"token":"\\([^"]*\\)".*/\\1/p')
    curl -s -X POST ${a!.url}/sw/signals -H "Authorization: Bearer $token" ${json} -d '{"$type":"broadcast","$tags":["hello"],"text":"hi, network"}'
    curl -s '${net.aggregator.url}/search/signals?q=network&cursor=0&wait=25'
${b ? `\n  The same token publishes on ${b.name}, directly (${b.url}/sw/signals) or through the aggregator\n  (${net.aggregator.url}/sw/${new URL(b.url).host}/sw/signals). A new identity is unverified: one new thread a day per board\n  (UNVERIFIED_THREADS_PER_DAY), replies freely.\n` : ''}
`
}
