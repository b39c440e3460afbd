import { readFileSync } from 'node:fs'
import t from 'tap'
import { VIEW_CSP } from '../../apps/reader/routes/view.js'
import { CLIENT_ENTRY, PAGE_FILES } from '../../apps/reader/view-assets.js'
import { projectPath } from '../../libs/shared/paths.js'
import { buildClientIfMissing } from '../helpers/browser.js'
import { startStack } from '../helpers/stack.js'

// What the reader serves under /view: the page, its files and the client library's modules, each
// with a strict CSP and nosniff; nothing outside the fixed list, whatever the path says.

t.test('the viewer files', async (t) => {
  buildClientIfMissing()
  const s = await startStack(t)
  const get = (url: string, headers: Record<string, string> = {}) => s.app.inject({ url, headers })

  t.test('/view is the page, under a strict Content-Security-Policy', async (t) => {
    const res = await get('/view')
    t.equal(res.statusCode, 200)
    t.equal(res.headers['content-type'], 'text/html; charset=utf-8')
    const csp = String(res.headers['content-security-policy'])
    for (const d of [
      "default-src 'self'",
      "script-src 'self'",
      "style-src 'self'",
      "connect-src 'self'",
      "frame-ancestors 'none'",
      "object-src 'none'",
    ])
      t.ok(csp.split('; ').includes(d), d)
    t.notMatch(csp, /unsafe-inline|unsafe-eval|\*|https?:/, 'no inline code, no eval, no other origin')
    t.equal(res.headers['x-content-type-options'], 'nosniff')
    t.equal(res.headers['x-frame-options'], 'DENY')
    t.equal(res.headers['referrer-policy'], 'no-referrer')
    t.equal(res.headers['cache-control'], 'no-cache')
    t.match(
      res.body,
      /<script type="module" src="view\/main\.js"><\/script>/,
      'its files named relative to /view, so a path prefix (a proxy) keeps working',
    )
    t.notMatch(res.body, /(src|href)="\//, 'no absolute path in the page')
    t.notMatch(res.body, /<script>|<style|style="|\son[a-z]+=/i, 'no inline script, style or handler in the page')
    t.ok(readFileSync(projectPath('docs/viewer.md'), 'utf8').includes(`| \`${VIEW_CSP}\` |`), 'docs/viewer.md shows this policy')
    const moves: [string, string][] = [
      ['/view/', '../view'],
      ['/view/?tag=deploy&layout=compact', '../view?tag=deploy&layout=compact'],
      ['/view/index.html', '../view'],
      ['/view/index.html?q=x', '../view?q=x'],
    ]
    for (const [url, to] of moves) {
      const moved = await get(url)
      t.equal(moved.statusCode, 308, `${url} is sent to the page`)
      t.equal(String(moved.headers.location), to, 'by a relative Location, which keeps any path prefix and the query')
    }
    const head = await s.app.inject({ method: 'HEAD', url: '/view' })
    t.equal(head.statusCode, 200, 'HEAD answers')
  })

  t.test('every listed file is served with its type, an ETag and the same headers', async (t) => {
    const types: Record<string, RegExp> = {
      html: /^text\/html/,
      js: /^text\/javascript; charset=utf-8$/,
      css: /^text\/css; charset=utf-8$/,
      svg: /^image\/svg\+xml$/,
    }
    for (const name of [...PAGE_FILES, CLIENT_ENTRY]) {
      const res = await get(name === 'index.html' ? '/view' : `/view/${name}`) // /view/index.html is sent to /view
      t.equal(res.statusCode, 200, `${name} is served`)
      t.match(res.headers['content-type'], types[name.split('.').at(-1)!]!, `${name}: its content type`)
      t.equal(res.headers['x-content-type-options'], 'nosniff', `${name}: nosniff`)
      t.equal(res.headers['content-security-policy'], VIEW_CSP, `${name}: the CSP`)
      const again = await get(name === 'index.html' ? '/view' : `/view/${name}`, { 'if-none-match': String(res.headers.etag) })
      t.equal(again.statusCode, 304, `${name}: revalidates with its ETag`)
    }
    const entry = await get(`/view/${CLIENT_ENTRY}`)
    t.match(entry.body, /export \{ WireClient/, "the client library's compiled entry point")
    t.match((await get('/view/client/client/src/follow.js')).body, /class Follower/, 'and the modules it imports')
    t.match((await get('/view/client/libs/shared/domain/wire-types.js')).statusCode, 200, 'including the shared domain types it compiles')
  })

  t.test('anything else under /view is a JSON 404', async (t) => {
    const paths = [
      '/view/nope.js',
      '/view/%2e%2e/%2e%2e/package.json',
      '/view/..%2f..%2fpackage.json',
      '/view/client/../../../package.json',
      '/view/client/client/src/index.js.map',
      '/view/client/client/src/index.d.ts',
      '/view/client/',
      '/view/client/client/../../../../apps/reader/view-assets.ts',
      '/view/index.html/x',
      `/view/${'a/'.repeat(400)}x.js`,
      '/view/%00.js',
      '/view/style.css%00.html',
    ]
    for (const url of paths) {
      const res = await get(url)
      t.equal(res.statusCode, 404, `${url.slice(0, 60)} → 404`)
      t.match(res.headers['content-type'], /^application\/json/, 'as JSON')
      t.equal(res.json().error.code, 'not_found')
    }
    t.equal((await s.app.inject({ method: 'POST', url: '/view' })).statusCode, 405, 'the page is GET only')
  })

  t.test('discovery links the viewer and GET / stays the liveness answer', async (t) => {
    t.equal((await get('/.well-known/wire')).json().viewer, 'http://localhost:4000/view')
    t.same((await get('/')).json(), { name: 'wire', status: 'live' })
  })
})
