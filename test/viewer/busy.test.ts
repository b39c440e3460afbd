import { createServer, request } from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import type { Page } from 'playwright-core'
import { buildClientIfMissing, launchBrowser, listen, openPage } from '../helpers/browser.js'
import { startStack } from '../helpers/stack.js'

// The viewer on a board busier than one page: new signals wait behind an
// "N new" marker while the reader is scrolled down; "Load older" pages past the first 100; the
// panel's counts follow the feed; replies show their parent's text; activity per origin; and the
// page works under a path prefix, as an aggregator's proxy serves it.

const AGENTS = ['alpha-agent-token', 'bravo-agent-token', 'charlie-agent-token'] as const

t.test('the viewer on a board of 137 signals', async (t) => {
  buildClientIfMissing()
  const s = await startStack(t, { env: { PUBLISH_RATE_LIMIT_MAX: '0' } })
  const base = await listen(s)
  const browser = await launchBrowser(t)
  const publish = async (body: Record<string, unknown>, token: string = AGENTS[0]) => {
    const r = await s.publish(body, token)
    if (r.statusCode !== 200) throw new Error(`publish: ${r.statusCode} ${JSON.stringify(r.json())}`)
    return r.json().signal as { id: string; origin: string }
  }

  // 137 active: the oldest is a request a late reply answers, so its parent is not on the first page
  const oldRoot = await publish({
    $type: 'request',
    $tags: ['review'],
    agent: 'alpha',
    text: 'Who reviews the <b>ledger</b> migration? <img src=x onerror="document.title=1">',
  })
  const origins: Record<string, number> = {}
  for (let i = 1; i < 135; i++) {
    const sig = await publish({ $type: ['broadcast', 'offer'][i % 2], $tags: ['busy'], text: `status ${i}: all green` }, AGENTS[i % 3])
    origins[sig.origin] = (origins[sig.origin] ?? 0) + 1
  }
  const newRoot = await publish({ $type: 'request', $tags: ['deploy'], text: 'Canary at 5% for api-gateway, any objections?' }, AGENTS[1])
  await publish({ $type: 'reply', $refId: newRoot.id, text: 'none, go ahead' }, AGENTS[2])
  const lateReply = await publish({ $type: 'reply', $refId: oldRoot.id, text: 'I can, after lunch' }, AGENTS[1])

  const live = (page: Page) => page.locator('body[data-feed="live"]').waitFor({ timeout: 5000 })
  const cards = (page: Page) => page.locator('#feed-list > li').count()

  t.test('new signals wait behind an "N new" marker while the reader is scrolled down', async (t) => {
    const { page, problems } = await openPage(t, browser, `${base}/view`)
    await live(page)
    t.equal(await page.locator('#feed-new').isHidden(), true, 'no marker at the top')
    const first = await publish({ $type: 'broadcast', text: 'arrives while at the top' })
    await page.locator(`#feed-list > li:first-child article[data-id="${first.id}"]`).waitFor({ timeout: 5000 })
    t.pass('at the top, a new signal goes straight on top')

    await page.evaluate('scrollTo(0, 1500)')
    const anchor = page.locator('#feed-list > li').nth(20)
    const before = await anchor.evaluate((e) => e.getBoundingClientRect().top)
    const a = await publish({ $type: 'broadcast', text: 'first while scrolled' })
    const b = await publish({ $type: 'broadcast', text: 'second while scrolled' })
    await page.locator('#feed-new', { hasText: '2 new signals' }).waitFor({ timeout: 5000 })
    t.equal(await page.locator(`#feed-list article[data-id="${a.id}"]`).count(), 0, 'not put in the feed yet')
    t.equal(await anchor.evaluate((e) => e.getBoundingClientRect().top), before, 'the card being read did not move')
    t.match(await page.locator('#feed-count').textContent(), /· 2 new ·/)
    t.ok(await page.locator('#feed-new').isVisible(), 'the marker is on screen while scrolled')

    await page.locator('#feed-new').click()
    await page.locator(`#feed-list > li:first-child article[data-id="${b.id}"]`).waitFor({ timeout: 5000 })
    t.equal(await page.locator(`#feed-list > li:nth-child(2) article[data-id="${a.id}"]`).count(), 1, 'both, newest first')
    t.equal(await page.evaluate('scrollY'), 0, 'the click jumped to the top')
    t.ok(await page.locator('#feed-new').isHidden(), 'and the marker went away')

    // scrolling back up by hand shows them too
    await page.evaluate('scrollTo(0, 1500)')
    const c = await publish({ $type: 'broadcast', text: 'third while scrolled' })
    await page.locator('#feed-new', { hasText: '1 new signal' }).waitFor({ timeout: 5000 })
    await page.evaluate('scrollTo(0, 0)')
    await page.locator(`#feed-list > li:first-child article[data-id="${c.id}"]`).waitFor({ timeout: 5000 })
    t.pass('back at the top, the waiting signal is shown')
    t.same(problems, [])
  })

  t.test('"Load older" pages past the first 100, and the panel counts agree with the feed', async (t) => {
    const { page, problems } = await openPage(t, browser, `${base}/view`)
    await live(page)
    const active = Number(await page.locator('#stat-signals').textContent())
    t.ok(active > 100, `${active} active on the board`)
    t.equal(await cards(page), 100, 'the first page')
    t.match(await page.locator('#feed-older-note').textContent(), /newest 100/)
    t.match(await page.locator('#stat-cover').textContent(), new RegExp(`newest 100 of these ${active}: Load older`))
    t.equal(await page.locator(`#feed-list article[data-id="${oldRoot.id}"]`).count(), 0, 'the oldest is not on it')

    await page.locator('#feed-older').click()
    await page.locator(`#feed-list > li:last-child article[data-id="${oldRoot.id}"]`).waitFor({ timeout: 10_000 })
    t.equal(await cards(page), active, 'every active signal, the oldest last')
    const ids = await page.locator('#feed-list article').evaluateAll((els) => els.map((e) => e.getAttribute('data-id')))
    t.equal(new Set(ids).size, ids.length, 'none twice')
    t.ok(await page.locator('#feed-older').isHidden(), 'no more to load')
    t.match(await page.locator('#feed-older-note').textContent(), new RegExp(`all ${active} are here`))
    t.equal(await page.locator('#stat-cover').textContent(), `The feed holds all ${active}.`)

    // a new signal moves the panel's count with the feed, well before the 15 s refresh
    await page.evaluate('scrollTo(0, 0)') // at the top, so it goes straight into the feed
    await publish({ $type: 'broadcast', text: 'one more' })
    await page.locator('#feed-count', { hasText: `${active + 1} shown` }).waitFor({ timeout: 5000 })
    await page.locator('#stat-signals', { hasText: String(active + 1) }).waitFor({ timeout: 5000 })
    t.equal(await cards(page), active + 1, 'the feed and the panel say the same')
    t.same(problems, [])
  })

  t.test('a filtered feed pages back too', async (t) => {
    const { page, problems } = await openPage(t, browser, `${base}/view?tag=busy`)
    await live(page)
    t.equal(await cards(page), 100)
    await page.locator('#feed-older').click()
    await page.locator('#feed-older-note', { hasText: 'all 134 are here' }).waitFor({ timeout: 10_000 })
    t.equal(await cards(page), 134, 'every signal tagged busy')
    t.match(await page.locator('#stat-cover').textContent(), /134 signals matching its filters/)
    t.same(problems, [])
  })

  t.test("replies show their parent's author and text, fetched when the parent is not on the page", async (t) => {
    const { page, problems } = await openPage(t, browser, `${base}/view`)
    await live(page)
    const far = page.locator(`#feed-list article[data-id="${lateReply.id}"] .reply-to`)
    await far.locator('.parent-text').waitFor({ timeout: 5000 })
    t.equal(await far.locator('.parent-who').textContent(), 'alpha', "the parent's self-given name")
    t.equal(
      await far.locator('.parent-text').textContent(),
      'Who reviews the <b>ledger</b> migration? <img src=x onerror="document.title=1">',
      'its text, as text',
    )
    t.equal(await far.locator('img, b').count(), 0, 'no markup from it')
    const near = page.locator(`#feed-list article[data-id="${newRoot.id}"]`)
    t.equal(await near.count(), 1)
    const reply = page.locator('#feed-list article .reply-to', { hasText: 'Canary at 5% for api-gateway, any objections?' })
    t.equal(await reply.count(), 1, 'a parent on the page: its text, from the page')
    await reply.click()
    await page.locator('#thread[data-state="live"]').waitFor({ timeout: 5000 })
    t.equal(await page.locator(`#thread article.current[data-id="${newRoot.id}"]`).count(), 1, 'a click opens the thread at the parent')
    t.notMatch(await page.title(), /^1$/)
    t.same(problems, [])
  })

  t.test("on a phone, a reply's long parent line is cut, not the page widened", async (t) => {
    const { page, problems } = await openPage(t, browser, `${base}/view`, { width: 390, height: 844 })
    await live(page)
    await page.locator(`#feed-list article[data-id="${lateReply.id}"] .reply-to .parent-text`).waitFor({ timeout: 5000 })
    t.equal(await page.evaluate('document.documentElement.scrollWidth'), 390, 'no sideways scrolling')
    t.same(problems, [])
  })

  t.test('activity per origin: who published what the page holds, and a click filters by it', async (t) => {
    const { page, problems } = await openPage(t, browser, `${base}/view`)
    await live(page)
    await page.locator('#feed-older').click()
    await page.locator('#feed-older-note', { hasText: 'are here' }).waitFor({ timeout: 10_000 })
    const rows = page.locator('#origins-list li')
    // a function, not a string: the page's CSP forbids eval; and the panel caught up with every card, not just three rows
    await page.waitForFunction(
      () => {
        const doc = (globalThis as any).document // runs in the page (this file has no DOM types)
        const rows: any[] = [...doc.querySelectorAll('#origins-list li')]
        const sum = rows.reduce((n: number, e: any) => n + Number(e.querySelector('.origin-count')?.textContent ?? 0), 0)
        return rows.length === 3 && sum === doc.querySelectorAll('#feed-list article').length
      },
      null,
      { timeout: 10_000 },
    )
    const held = await page.locator('#feed-list article').evaluateAll((els) => els.length)
    const shown = await rows.evaluateAll((els) =>
      els.map((e) => [e.getAttribute('data-origin'), Number(e.querySelector('.origin-count')!.textContent)] as const),
    )
    const counted = await page.locator('#feed-list article').evaluateAll((els) => {
      const by: Record<string, number> = {}
      for (const e of els) {
        const o = e.querySelector('.origin button')!.getAttribute('data-value')!
        by[o] = (by[o] ?? 0) + 1
      }
      return by
    })
    t.same(Object.fromEntries(shown), counted, 'each origin with as many signals as the feed shows from it')
    t.equal(
      shown.reduce((n, [, c]) => n + c, 0),
      held,
    )
    t.ok(
      shown.every(([, c], i) => i === 0 || c <= shown[i - 1]![1]),
      'busiest first',
    )
    t.match(await page.locator('#origins-note').textContent(), new RegExp(`3 origins in the ${held} signals`))
    const busiest = shown[0]![0]!
    await rows.first().locator('button').click()
    await page.waitForURL(new RegExp(`[?&]origin=${busiest}`), { timeout: 5000 })
    await page.waitForFunction(() => (globalThis as any).document.querySelectorAll('#origins-list li').length === 1, null, {
      timeout: 10_000,
    })
    t.equal(
      await page
        .locator('#feed-list article .origin button')
        .evaluateAll((els, o) => els.every((e) => e.getAttribute('data-value') === o), busiest),
      true,
      'the feed shows only that origin',
    )
    t.same(problems, [])
  })

  t.test('under a path prefix (an aggregator proxy), the page loads its files and follows the board', async (t) => {
    // a plain forwarding proxy: /sw/board.test/<path> → the board's /<path>
    const target = new URL(base)
    const proxy = createServer((req, res) => {
      const m = /^\/sw\/board\.test(\/.*)$/.exec(req.url ?? '')
      if (!m) return void res.writeHead(404).end()
      const up = request(
        { host: target.hostname, port: target.port, path: m[1], method: req.method, headers: req.headers },
        (r) => (res.writeHead(r.statusCode ?? 502, r.headers), r.pipe(res)),
      )
      up.on('error', () => res.writeHead(502).end())
      req.pipe(up)
    })
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve))
    t.teardown(() => (proxy.closeAllConnections(), new Promise((resolve) => proxy.close(resolve))))
    const prefix = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/sw/board.test`

    const { page, problems } = await openPage(t, browser, `${prefix}/view`)
    await live(page)
    await page.locator('#board-chart svg').waitFor({ state: 'attached', timeout: 5000 })
    const fresh = await publish({ $type: 'broadcast', text: 'through the proxy' })
    await page.locator(`#feed-list article[data-id="${fresh.id}"]`).waitFor({ timeout: 5000 })
    const outside = await page.evaluate(() =>
      performance
        .getEntriesByType('resource')
        .map((e) => e.name)
        .filter((u) => !u.includes('/sw/board.test/')),
    )
    t.same(outside, [], 'every file and read under the prefix')
    await page.goto(`${prefix}/view/?tag=busy`)
    await live(page)
    t.equal(page.url(), `${prefix}/view?tag=busy`, '/view/ sends the browser to /view, query kept')
    t.same(problems, [])
  })
})
