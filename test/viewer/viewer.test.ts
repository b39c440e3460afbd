import t from 'tap'
import type { Page } from 'playwright-core'
import { buildClientIfMissing, launchBrowser, listen, openPage } from '../helpers/browser.js'
import { startStack } from '../helpers/stack.js'

// The viewer in a real Chromium against a real board: the page follows the feed live, filters
// through the URL, opens threads, runs operator actions, and never turns a payload into markup.

const ADMIN = 'admin-secret-token'

t.test('the viewer', async (t) => {
  buildClientIfMissing()
  const s = await startStack(t)
  const base = await listen(s)
  const browser = await launchBrowser(t)

  const publish = async (body: Record<string, unknown>, token = 'agent-one-token') => {
    const res = await fetch(`${base}/sw/signals`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
    if (res.status !== 200) throw new Error(`publish: ${res.status} ${await res.text()}`)
    return ((await res.json()) as { signal: { id: string; origin: string } }).signal
  }
  const card = (page: Page, id: string) => page.locator(`#feed-list article[data-id="${id}"]`)
  const live = async (page: Page) => await page.locator('body[data-feed="live"]').waitFor({ timeout: 5000 })
  const feedIds = (page: Page) => page.locator('#feed-list article').evaluateAll((els) => els.map((e: any) => e.dataset.id as string))

  t.test('the page loads and a signal published while it is open appears within a second, newest on top', async (t) => {
    const before = await publish({ $type: 'broadcast', $tags: ['hello'], text: 'already here' })
    const { page, problems } = await openPage(t, browser, `${base}/view`)
    await live(page)
    t.equal(await card(page, before.id).locator('.text').textContent(), 'already here', 'the newest page is shown on load')
    await page.locator('#board-chart svg').waitFor({ state: 'attached', timeout: 5000 }) // the board panel has loaded
    t.equal(await page.locator('#board-name').textContent(), 'main', 'the board panel names the board')
    t.match(await page.locator('#stat-signals').textContent(), /^\d+$/, 'with its active signal count')
    t.match(
      await page.locator('#board-chart svg').getAttribute('aria-label'),
      /^\d+ signals in the last 30 minutes/,
      'and an activity chart with a text alternative',
    )

    const t0 = Date.now()
    const fresh = await publish({ $type: 'offer', $tags: ['gpu'], text: 'two idle GPUs' })
    await card(page, fresh.id).waitFor({ timeout: 5000 })
    const ms = Date.now() - t0
    t.ok(ms < 1000, `shown ${ms} ms after the publish answered`)
    t.same(await feedIds(page).then((ids) => ids.slice(0, 2)), [fresh.id, before.id], 'newest at the top')
    const c = card(page, fresh.id)
    t.equal(await c.locator('.type').textContent(), 'offer')
    t.same(await c.locator('.tag').allTextContents(), ['#gpu'])
    t.match(await c.locator('.origin').textContent(), /fp_/, 'the origin (local mode has no display name)')
    t.match(await c.locator('.badge').textContent(), /verified/, 'with its verified badge')
    t.match(await c.locator('.ttl').textContent(), /^1[12] h left$/, 'time left before expiry')
    t.match(await c.locator('time').textContent(), /just now|s ago/, 'relative time')
    await c.locator('summary', { hasText: 'Raw JSON' }).click()
    t.match(
      JSON.parse((await c.locator('.raw pre').textContent()) ?? ''),
      { id: fresh.id, type: 'offer', payload: { text: 'two idle GPUs' } },
      'raw JSON one click away',
    )
    const loaded = await page.evaluate(() => performance.getEntriesByType('resource').map((e) => new URL(e.name).pathname))
    t.ok(loaded.includes('/view/client/client/src/follow.js'), "the page follows with the client library's Follower")
    t.same(problems, [], 'no script errors or CSP violations')
  })

  t.test('a payload carrying HTML and script is shown as text', async (t) => {
    const { page, problems } = await openPage(t, browser, `${base}/view`)
    await live(page)
    const evil = '<img src=x onerror="window.__owned=1"><script>window.__owned=2</script><b>bold</b>'
    const sig = await publish({ $type: '<i>type</i>', $tags: ['<u>tag</u>'], text: evil })
    const c = card(page, sig.id)
    await c.waitFor({ timeout: 5000 })
    t.equal(await c.locator('.text').textContent(), evil, 'the text as typed')
    t.equal(await c.locator('.type').textContent(), '<i>type</i>', 'the type as text')
    t.equal(await c.locator('img, script, b, i, u').count(), 0, 'no element made from the payload')
    t.equal(await page.evaluate('window.__owned'), undefined, 'no script ran')
    t.same(problems, [], 'no script errors or CSP violations')
  })

  t.test('filters narrow the feed, live in the URL and survive a reload', async (t) => {
    const { page, problems } = await openPage(t, browser, `${base}/view`)
    await live(page)
    await publish({ $type: 'broadcast', $tags: ['alpha-team'], text: 'for alpha' })
    await page.locator('#filters input[name="tag"]').fill('alp')
    await page.locator('#tag-options option[value="alpha-team"]').waitFor({ state: 'attached', timeout: 5000 })
    t.pass('the tag field offers alpha-team from /sw/tags')
    await page.locator('#filters input[name="tag"]').fill('alpha-team')
    await page.waitForURL(/\?tag=alpha-team$/, { timeout: 5000 })
    await live(page)
    const other = await publish({ $type: 'broadcast', $tags: ['beta'], text: 'for beta' })
    const wanted = await publish({ $type: 'request', $tags: ['alpha-team'], text: 'alpha, please' })
    await card(page, wanted.id).waitFor({ timeout: 5000 })
    t.equal(await card(page, other.id).count(), 0, 'a signal without the tag is not shown')
    t.same(
      await page
        .locator('#feed-list .tag')
        .allTextContents()
        .then((x) => [...new Set(x)]),
      ['#alpha-team'],
      'every card has the tag',
    )

    await card(page, wanted.id).locator('.type').click() // a type badge filters by that type
    await page.waitForURL(/\?type=request&tag=alpha-team$/, { timeout: 5000 })
    await live(page)
    t.same(await feedIds(page), [wanted.id], 'type and tag together')

    await page.reload()
    await live(page)
    t.equal(await page.locator('#filters input[name="type"]').inputValue(), 'request', 'the URL restores the type filter')
    t.equal(await page.locator('#filters input[name="tag"]').inputValue(), 'alpha-team', 'and the tag filter')
    t.same(await feedIds(page), [wanted.id], 'and the filtered feed')

    await page.locator('#filters button[type="reset"]').click()
    await page.waitForURL(`${base}/view`, { timeout: 5000 })
    await page.locator('#filters input[name="q"]').fill('PLEASE')
    await page.waitForURL(/\?q=PLEASE$/, { timeout: 5000 })
    await live(page)
    t.same(await feedIds(page), [wanted.id], 'free text matches case-insensitively')

    await page.goto(`${base}/view?tag=${'x'.repeat(65)}`)
    await page.locator('body[data-feed="error"]').waitFor({ timeout: 5000 })
    t.match(await page.locator('#notice[data-kind="error"]').textContent(), /64/, "a filter the board refuses shows the board's reason")

    const mine = await publish({ $type: 'broadcast', text: 'from agent two' }, 'agent-two-token')
    await page.goto(`${base}/view?origin=${mine.origin}`)
    await live(page)
    t.same(await feedIds(page), [mine.id], 'an origin filter from a shared URL')
    t.same(problems, [], 'no script errors or CSP violations')
  })

  t.test('a thread opens as a tree and new replies arrive in it live', async (t) => {
    const root = await publish({ $type: 'request', text: 'who can review?' })
    const r1 = await publish({ $type: 'reply', $refId: root.id, text: 'me' })
    const { page, problems } = await openPage(t, browser, `${base}/view`)
    await live(page)
    await card(page, r1.id).locator('button[data-action="thread"]').click()
    await page.locator('#thread[data-state="live"]').waitFor({ timeout: 5000 })
    t.match(page.url(), new RegExp(`\\?thread=${r1.id}$`), 'the open thread is in the URL')
    const tree = page.locator('#thread-body')
    t.equal(
      await tree.locator(`li:has(> article[data-id="${root.id}"]) > ol > li > article[data-id="${r1.id}"]`).count(),
      1,
      'the reply under its root',
    )
    t.equal(await tree.locator(`article[data-id="${r1.id}"].current`).count(), 1, 'the clicked signal is marked')

    const r2 = await publish({ $type: 'reply', $refId: r1.id, text: 'and me, under you' })
    await tree.locator(`li:has(> article[data-id="${r1.id}"]) > ol > li > article[data-id="${r2.id}"]`).waitFor({ timeout: 5000 })
    t.pass('a new reply arrives live under its parent')
    const open = () => page.locator('#thread').evaluate((d: any) => d.open as boolean)
    await page.goBack()
    await page.waitForURL(`${base}/view`, { timeout: 5000 })
    await page.locator('#thread:not([open])').waitFor({ state: 'attached', timeout: 5000 })
    t.notOk(await open(), 'Back closes the thread')
    await page.goForward()
    await page.locator('#thread[open][data-state="live"]').waitFor({ timeout: 5000 })
    t.ok(await open(), 'Forward opens it again')
    await page.keyboard.press('Escape')
    await page.waitForURL(`${base}/view`, { timeout: 5000 })
    t.notOk(await open(), 'Escape closes it')
    t.same(problems, [], 'no script errors or CSP violations')
  })

  t.test('operator mode: pin, unpin, remove, metadata and rules, with the token kept in the tab only', async (t) => {
    const sig = await publish({ $type: 'broadcast', text: 'moderate me' })
    const { page, problems } = await openPage(t, browser, `${base}/view`)
    page.on('dialog', (d) => void d.accept()) // the removal confirmation
    await live(page)
    t.equal(await card(page, sig.id).locator('button[data-action="pin"]').isVisible(), false, 'no operator buttons before the token')
    await page.locator('#operator-toggle').click()
    await page.locator('#op-login input[name="token"]').fill('not-the-token')
    await page.locator('#op-login button[type="submit"]').click()
    await page.locator('#notice[data-kind="error"]', { hasText: 'unauthorized' }).waitFor({ timeout: 5000 })
    t.notOk(await page.locator('body.op-mode').count(), 'a wrong token is refused')

    await page.locator('#op-login input[name="token"]').fill(ADMIN)
    await page.locator('#op-login button[type="submit"]').click()
    await page.locator('body.op-mode').waitFor({ timeout: 5000 })
    const stored = (await page.evaluate(
      '({ local: JSON.stringify(localStorage), session: JSON.stringify(sessionStorage), cookie: document.cookie, url: location.href })',
    )) as Record<string, string>
    for (const [where, v] of Object.entries(stored)) t.notMatch(v, ADMIN, `the token is not in ${where}`)

    const get = async (id: string) => (await fetch(`${base}/sw/signals/${id}`)).json() as Promise<any>
    await card(page, sig.id).locator('button[data-action="pin"]').click()
    await page.locator(`#feed-list article.is-pinned[data-id="${sig.id}"]`).waitFor({ timeout: 5000 })
    t.equal((await get(sig.id)).signal.pinned, true, 'pinned on the board')
    await card(page, sig.id).locator('button[data-action="unpin"]').click()
    await page.locator(`#feed-list article:not(.is-pinned)[data-id="${sig.id}"] button[data-action="pin"]`).waitFor({ timeout: 5000 })
    t.equal((await get(sig.id)).signal.pinned, false, 'unpinned on the board')
    await card(page, sig.id).locator('button[data-action="remove"]').click()
    await card(page, sig.id).waitFor({ state: 'detached', timeout: 5000 })
    t.equal((await fetch(`${base}/sw/signals/${sig.id}`)).status, 404, 'removed from the board')

    const meta = page.locator('#op-meta')
    await meta.locator('input[name="name"]').fill('Night shift')
    await meta.locator('textarea[name="description"]').fill('Agents <b>at work</b>')
    await meta.locator('input[name="types"]').fill('broadcast, reply, request')
    await meta.locator('button[type="submit"]').click()
    await page.locator('#board-name', { hasText: 'Night shift' }).waitFor({ timeout: 5000 })
    const board = (await (await fetch(`${base}/sw/wire`)).json()) as any
    t.match(
      board,
      { name: 'Night shift', description: 'Agents <b>at work</b>', allowedSignalTypes: ['broadcast', 'reply', 'request'] },
      'metadata saved',
    )
    t.equal(await page.locator('#board-description').textContent(), 'Agents <b>at work</b>', 'and shown as text')

    const rules = page.locator('#op-rule')
    await rules.locator('select[name="ruleType"]').selectOption('deny')
    await rules.locator('input[name="identityId"]').fill('fp_0123456789abcdef0123')
    await rules.locator('button[type="submit"]').click()
    await page.locator('#op-rules li', { hasText: 'fp_0123456789abcdef0123' }).waitFor({ timeout: 5000 })
    const listed = (await (await fetch(`${base}/sw/admin/rules`, { headers: { authorization: `Bearer ${ADMIN}` } })).json()) as any
    t.match(listed.rules, [{ ruleType: 'deny', identityId: 'fp_0123456789abcdef0123' }], 'the rule is on the board')
    await page.locator('#op-rules button[data-rule]').click()
    await page.locator('#op-rules li', { hasText: 'fp_0123456789abcdef0123' }).waitFor({ state: 'detached', timeout: 5000 })
    t.same(
      ((await (await fetch(`${base}/sw/admin/rules`, { headers: { authorization: `Bearer ${ADMIN}` } })).json()) as any).rules,
      [],
      'and removed again',
    )

    await page.locator('#op-leave').click()
    t.notOk(await page.locator('body.op-mode').count(), 'leaving operator mode forgets the token')
    t.same(problems, [], 'no script errors or CSP violations')
  })

  t.test('a signal leaves the page when it expires, a pinned one stays', async (t) => {
    const brief = await publish({ $type: 'broadcast', $ttl: 10, text: 'gone soon' })
    const kept = await publish({ $type: 'broadcast', $ttl: 10, text: 'pinned, kept' })
    await fetch(`${base}/sw/admin/signals/${kept.id}/pin`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}` } })
    const { page, problems } = await openPage(t, browser, 'about:blank')
    await page.clock.install() // the page's clock, moved on below instead of waiting 10 s
    await page.goto(`${base}/view`)
    await live(page)
    t.match(await card(page, brief.id).locator('.ttl').textContent(), /^\d s left$/, 'seconds left')
    t.equal(await card(page, kept.id).locator('.ttl').textContent(), 'kept while pinned', 'a pinned signal has no countdown')
    await page.clock.fastForward(15_000)
    await card(page, brief.id).waitFor({ state: 'detached', timeout: 5000 })
    t.equal(await card(page, kept.id).count(), 1, 'the pinned signal stays past its expiry')
    t.same(problems, [], 'no script errors or CSP violations')
  })

  t.test('on a phone the page fits the screen', async (t) => {
    const { page, problems } = await openPage(t, browser, `${base}/view`, { width: 390, height: 844 })
    await live(page)
    t.ok(await page.evaluate('document.documentElement.scrollWidth <= 390'), 'no sideways scrolling')
    t.notOk(await page.locator('#board-details').evaluate((d: any) => d.open), 'the board panel starts folded')
    await page.locator('#board-details > summary').press('Enter')
    t.ok(await page.locator('#board-details').evaluate((d: any) => d.open), 'and opens from the keyboard')
    t.same(problems, [], 'no script errors or CSP violations')
  })
})
