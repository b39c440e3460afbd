/**
 * The oldest Node.js the server and the command line run on: the highest `engines` floor among
 * the server's dependencies. undici 8 (the aggregator's HTTP client) declares 22.19 and calls
 * `zlib.createZstdDecompress` (22.15) when it loads: on 22.12 `wire-server --role aggregator` died
 * at start. OpenTelemetry 3 declares 22.15; pg-boss 12 and commander 15 22.12 (require() of ES
 * modules). `engines` in package.json and cli/package.json say the same, and the package tests
 * install and run the packed packages on this very version (test/packages/floor.test.ts). The
 * client library has its own, lower floor (client/package.json).
 */
export const NODE_FLOOR = '22.19.0'

const parts = (v: string) =>
  v
    .replace(/^v/, '')
    .split('.')
    .map((n) => Number.parseInt(n, 10) || 0)

/** The one line to print when `version` is older than the floor; null when it is new enough. */
export function nodeTooOld(program: string, version: string = process.versions.node): string | null {
  const [have, need] = [parts(version), parts(NODE_FLOOR)]
  for (let i = 0; i < 3; i++) {
    if ((have[i] ?? 0) > need[i]!) return null
    if ((have[i] ?? 0) < need[i]!)
      return `${program}: needs Node.js ${NODE_FLOOR} or newer, and this is Node.js ${version} (see "Node.js and the toolchain" in the README)`
  }
  return null
}

/** First thing every entry point does: on an older Node, one line on stderr and exit 1, before anything else loads. */
export function exitIfNodeTooOld(program: string): void {
  const message = nodeTooOld(program)
  if (!message) return
  process.stderr.write(`${message}\n`)
  process.exit(1)
}
