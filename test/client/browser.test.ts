import { existsSync, readFileSync } from 'node:fs'
import { join, normalize } from 'node:path'
import { chromium } from 'playwright-core'
import t from 'tap'
import { projectPath } from '../../libs/shared/paths.js'
import { httpServer, listeningBoard } from './support.js'

// The built client in a real browser: plain ES modules from a relative URL, talking to a board on
// another origin (CORS), publishing and following.

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const DIST = projectPath('client/dist')

const PAGE = `<!doctype html><meta charset="utf-8"><title>client</title>
<script type="module">
  import { WireClient, parseSignalUri } from './client/src/index.js'
  window.run = async (url) => {
    const wire = new WireClient({ url, token: 'browser-agent-token' })
    const stop = new AbortController()
    const got = []
    const following = (async () => {
      for await (const s of wire.follow({ tag: 'web' }, { cursor: 0, signal: stop.signal })) {
        got.push(s.payload.text)
        if (got.length === 2) stop.abort()
      }
    })()
    const first = await wire.publish({ $type: 'broadcast', $tags: ['web'], text: 'from a page' })
    await wire.publish({ $type: 'reply', $refId: first.signal.uri, $tags: ['web'], text: 'and a reply' })
    await following
    // a custom header: the CORS preflight must let Idempotency-Key through
    const keyed = await wire.publish({ $type: 'broadcast', text: 'keyed' }, { idempotencyKey: 'browser-key-1' })
    if (!keyed.ok) throw new Error('keyed publish failed')
    const error = await wire.get('AAAAAAAAAAAAAAAAAAAA').catch((e) => [e.name, e.code, e.status])
    return { got, id: parseSignalUri(first.signal.uri).id === first.signal.id, error }
  }
</script>`

t.test('a page imports client/dist and publishes and follows a board on another origin', async (t) => {
  if (!existsSync(join(DIST, 'client/src/index.js'))) throw new Error('client/dist is missing: npm run build')
  if (!existsSync(CHROMIUM)) throw new Error(`no browser at ${CHROMIUM} (apt-get install -y chromium, or set CHROMIUM_PATH)`)
  const { url } = await listeningBoard(t)
  // a static server for the page and client/dist, on its own origin
  const site = await httpServer(t, (req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname
    if (path === '/') return res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE)
    const file = normalize(join(DIST, path))
    if (!file.startsWith(DIST) || !existsSync(file)) return res.writeHead(404).end()
    res.writeHead(200, { 'content-type': 'text/javascript' }).end(readFileSync(file))
  })
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] })
  t.teardown(() => browser.close())
  const page = await browser.newPage()
  const problems: string[] = []
  page.on('pageerror', (err) => problems.push(err.message))
  await page.goto(site.url)
  await page.waitForFunction(() => typeof (globalThis as unknown as { run?: unknown }).run === 'function')
  const result = await page.evaluate((u) => (globalThis as unknown as { run(u: string): Promise<unknown> }).run(u), url)
  t.same(result, { got: ['from a page', 'and a reply'], id: true, error: ['WireError', 'not_found', 404] })
  t.same(problems, [], 'no script errors')
})
