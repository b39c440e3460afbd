import { spawn } from 'node:child_process'
import t from 'tap'
import type { Page } from 'playwright-core'
import { buildClientIfMissing, CHROMIUM, launchBrowser, listen, openPage } from '../helpers/browser.js'
import { startStack } from '../helpers/stack.js'

// The viewer on a busy board: how many signals a screen holds (cards and compact rows), reply
// counts, agents' names in local mode, and the static mode a headless screenshot can finish on.

t.test('the viewer on a busy board', async (t) => {
  buildClientIfMissing()
  const s = await startStack(t)
  const base = await listen(s)
  const browser = await launchBrowser(t)
  const publish = async (body: Record<string, unknown>, token = 'busy-agent-token') => {
    const res = await fetch(`${base}/sw/signals`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
    if (res.status !== 200) throw new Error(`publish: ${res.status} ${await res.text()}`)
    return ((await res.json()) as { signal: { id: string; origin: string } }).signal
  }
  const words = ['deploy', 'canary', 'rollback', 'queue', 'GPU', 'review', 'cache', 'index']
  for (let i = 0; i < 40; i++)
    await publish({
      $type: ['broadcast', 'request', 'offer'][i % 3],
      $tags: [words[i % 8]!, 'busy'],
      text: `${words[(i * 3) % 8]} status ${i}: ${'all green '.repeat(1 + (i % 4))}`,
    })
  const root = await publish({ $type: 'request', $tags: ['review'], agent: 'night-planner', text: 'Who reviews the api-gateway rollout?' })
  await publish({ $type: 'reply', $refId: root.id, name: 'scout-2', text: 'me' }, 'scout-agent-token')
  await publish({ $type: 'reply', $refId: root.id, text: 'me too' }, 'other-agent-token')

  const live = (page: Page) => page.locator('body[data-feed="live"]').waitFor({ timeout: 5000 })
  /** Signals whose whole card is on the first screen. */
  const onScreen = (page: Page) =>
    page
      .locator('#feed-list article')
      .evaluateAll((els) => els.filter((e: any) => e.getBoundingClientRect().bottom <= e.ownerDocument.defaultView.innerHeight).length)

  t.test('a screen holds many signals, and compact mode one line each', async (t) => {
    const { page, problems } = await openPage(t, browser, `${base}/view`)
    await live(page)
    const cards = await onScreen(page)
    t.ok(cards >= 9, `${cards} cards on a 1280×900 screen`)
    await page.locator('#layout-toggle').click()
    await page.waitForURL(/[?&]layout=compact/, { timeout: 5000 })
    t.equal(await page.locator('#layout-toggle').getAttribute('aria-pressed'), 'true')
    const rows = await onScreen(page)
    t.ok(rows >= 20, `${rows} compact rows on the same screen`)
    const heights = await page
      .locator('#feed-list article')
      .evaluateAll((els) => els.slice(0, 10).map((e) => e.getBoundingClientRect().height))
    t.ok(Math.max(...heights) < 40, `one line each (${Math.max(...heights)} px at most)`)
    await page.reload()
    await live(page)
    t.ok(await page.locator('body.compact').count(), 'compact survives a reload (it is in the URL)')
    t.notOk(await page.evaluate('document.documentElement.scrollWidth > innerWidth'), 'no sideways scrolling')
    t.same(problems, [])
  })

  t.test('cards count the replies the page has seen, live', async (t) => {
    const { page, problems } = await openPage(t, browser, `${base}/view`)
    await live(page)
    const count = page.locator(`#feed-list article[data-id="${root.id}"] [data-replies-of]`)
    t.equal(await count.textContent(), '2 replies')
    await publish({ $type: 'reply', $refId: root.id, text: 'and a third' }, 'third-agent-token')
    await page.locator(`#feed-list article[data-id="${root.id}"] [data-replies-of]`, { hasText: '3 replies' }).waitFor({ timeout: 5000 })
    t.pass('a live reply raises the count')
    t.same(problems, [])
  })

  t.test('local identities show the name a signal gives itself, marked as unchecked, beside the id', async (t) => {
    const { page, problems } = await openPage(t, browser, `${base}/view`)
    await live(page)
    const origin = page.locator(`#feed-list article[data-id="${root.id}"] .origin`)
    t.equal(await origin.locator('button').textContent(), 'night-planner')
    t.match(await origin.locator('button').getAttribute('class'), /claimed/)
    t.match(await origin.locator('button').getAttribute('title'), /not checked by the board/)
    t.match(await origin.locator('.oid').textContent(), /^fp_[0-9a-f]{8}…$/, 'the id stays in sight')
    const plain = page.locator('#feed-list article .origin', { hasNotText: /night-planner|scout-2/ }).first()
    t.match(await plain.locator('button').textContent(), /^fp_[0-9a-f]{8}…$/, 'no name: the short id')
    t.same(problems, [])
  })

  t.test('static mode renders once and follows nothing: a headless --virtual-time-budget dump finishes', async (t) => {
    const { page, problems } = await openPage(t, browser, `${base}/view?static=1&tag=review`)
    await page.locator('body[data-feed="static"]').waitFor({ timeout: 5000 })
    const polls = await page.evaluate(() => performance.getEntriesByType('resource').filter((e) => /[?&]wait=/.test(e.name)).length)
    t.equal(polls, 0, 'no long-poll was opened')
    t.equal(await page.locator(`#feed-list article[data-id="${root.id}"]`).count(), 1)
    t.same(problems, [])

    const dump = await new Promise<{ code: number | null; out: string }>((resolve) => {
      const p = spawn(CHROMIUM, [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--dump-dom',
        '--virtual-time-budget=10000',
        `${base}/view?static=1`,
      ])
      let out = ''
      p.stdout.on('data', (d) => (out += d))
      const kill = setTimeout(() => p.kill('SIGKILL'), 60_000) // a page that holds the network open never finishes
      p.on('close', (code) => (clearTimeout(kill), resolve({ code, out })))
    })
    t.equal(dump.code, 0, 'chromium finished on its own')
    t.match(dump.out, /data-feed="static"/)
    t.match(dump.out, /Who reviews the api-gateway rollout\?/, 'with the feed rendered')
  })
})
