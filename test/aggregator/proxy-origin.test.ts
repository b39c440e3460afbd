import t from 'tap'
import { buildClientIfMissing, launchBrowser, openPage } from '../helpers/browser.js'
import { startHostileBoard } from '../../bench/lib/hostile-board.js'
import { auth, startTestAggregator, startTestBoard } from './support.js'

// A registrant's answers cannot act on the aggregator's origin: no cookies cross, anything that is
// not JSON is sandboxed and downloaded, and the board's own viewer still works through the proxy.

t.test("a board's HTML, cookies and permissive CSP do not reach the aggregator's origin as they were sent", async (t) => {
  const good = await startTestBoard(t)
  const evil = await startHostileBoard(t, 'html')
  const agg = await startTestAggregator(t, {}, { follow: false })
  for (const b of [good, evil]) t.equal((await agg.register(b.url)).status, 201)
  const direct = await fetch(`${evil.url}/page`)
  t.ok(direct.headers.get('set-cookie'), 'the board sends a cookie')
  const page = await fetch(`${agg.url}/sw/${evil.authority}/sw/page`)
  t.equal(page.status, 200)
  t.equal(page.headers.get('set-cookie'), null, 'Set-Cookie dropped')
  t.match(page.headers.get('content-security-policy'), /(^|, )sandbox$/, "sandboxed (the board's own policy kept beside, both apply)")
  t.equal(page.headers.get('x-content-type-options'), 'nosniff')
  t.equal(page.headers.get('content-disposition'), 'attachment', 'served as a download, not a page')
  const json = await fetch(`${agg.url}/sw/${good.authority}/sw/signals`)
  t.equal(json.headers.get('content-disposition'), null, 'JSON is answered as it is')
  t.notMatch(json.headers.get('content-security-policy') ?? '', /sandbox/)
  t.equal(json.headers.get('x-content-type-options'), 'nosniff')
})

t.test("the board's viewer works through the proxy, sandboxed at an opaque origin", async (t) => {
  buildClientIfMissing()
  const board = await startTestBoard(t)
  const agg = await startTestAggregator(t, {}, { follow: false })
  t.equal((await agg.register(board.url)).status, 201)
  const view = await fetch(`${agg.url}/sw/${board.authority}/view`)
  t.equal(view.status, 200)
  t.match(
    view.headers.get('content-security-policy'),
    /sandbox allow-scripts/,
    "its scripts run, in a sandbox without the aggregator's origin",
  )
  t.equal(view.headers.get('content-disposition'), null, 'the page is shown')
  const browser = await launchBrowser(t)
  const before = await fetch(`${board.url}/sw/signals`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...auth() },
    body: JSON.stringify({ $type: 'broadcast', text: 'seen through the proxy' }),
  })
  const { signal } = (await before.json()) as any
  const { page, problems } = await openPage(t, browser, `${agg.url}/sw/${board.authority}/view`)
  const shown = await page
    .locator(`#feed-list article[data-id="${signal.id}"]`)
    .waitFor({ timeout: 10_000 })
    .then(
      () => true,
      () => false,
    )
  t.ok(shown, `the page shows the board's signal${shown ? '' : `: ${problems.join('; ')}`}`)
  t.equal(
    await page.locator(`#feed-list article[data-id="${signal.id}"] .text`).textContent(),
    'seen through the proxy',
    'the feed loads through the proxy',
  )
  await page.locator('#board-chart svg').waitFor({ state: 'attached', timeout: 10_000 })
  t.equal(
    await page.evaluate(() => (globalThis as unknown as { origin: string }).origin),
    'null',
    "at an opaque origin: the aggregator's cookies and storage are out of reach",
  )
  const live = await fetch(`${board.url}/sw/signals`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...auth() },
    body: JSON.stringify({ $type: 'broadcast', text: 'live' }),
  })
  const fresh = ((await live.json()) as any).signal
  await page.locator(`#feed-list article[data-id="${fresh.id}"]`).waitFor({ timeout: 10_000 })
  t.pass('and follows it live')
  t.same(problems, [], 'no script errors or CSP violations')
})
