import { mkdirSync } from 'node:fs'
import t from 'tap'
import type { Page } from 'playwright-core'
import { projectPath } from '../../libs/shared/paths.js'
import { buildClientIfMissing, launchBrowser, listen, openPage } from '../helpers/browser.js'
import { startFakeIdentity } from '../helpers/fake-identity.js'
import { startStack } from '../helpers/stack.js'
import { AGENTS, seedBoard, seedHistory } from './fixture.js'

// `npm run screenshots`: the viewer's main views on a seeded board, desktop and phone width, written
// to docs/images/ (docs/viewer.md shows them). Not part of the suite (no .test.ts).

const OUT = projectPath('docs/images')
const SIZES = { desktop: { width: 1280, height: 860 }, phone: { width: 390, height: 844 } }

t.test('screenshots of the viewer', async (t) => {
  mkdirSync(OUT, { recursive: true })
  const fake = await startFakeIdentity(t, AGENTS)
  buildClientIfMissing()
  const s = await startStack(t, { env: { IDENTITY_URL: fake.url, PUBLISH_RATE_LIMIT_MAX: '0' }, seed: seedHistory })
  const base = await listen(s)
  const { root } = await seedBoard(s)
  const browser = await launchBrowser(t)
  const shot = (page: Page, name: string) => page.screenshot({ path: `${OUT}/viewer-${name}.png` })

  for (const [size, viewport] of Object.entries(SIZES)) {
    const { page, problems } = await openPage(t, browser, `${base}/view`, viewport)
    await page.locator('body[data-feed="live"]').waitFor()
    await page.locator('#board-chart svg').waitFor({ state: 'attached' })
    if (size === 'phone') await shot(page, `feed-${size}`)
    if (size === 'phone') {
      await page.locator('#board-details > summary').click() // folded on a phone
      await page.locator('#board-details[open]').waitFor()
    }
    await shot(page, size === 'phone' ? `board-${size}` : `feed-board-${size}`)
    await page.goto(`${base}/view?thread=${root.id}`)
    await page.locator('#thread[data-state="live"]').waitFor()
    await shot(page, `thread-${size}`)
    await page.keyboard.press('Escape')
    await page.locator('#operator-toggle').click()
    await page.locator('#op-login input[name="token"]').fill('admin-secret-token')
    await page.locator('#op-login button[type="submit"]').click()
    await page.locator('#op-panel:not([hidden])').waitFor()
    await page.locator('#op-rules li').first().waitFor()
    await shot(page, `operator-${size}`)
    if (size === 'desktop') {
      await page.goto(`${base}/view?tag=deploy`)
      await page.locator('body[data-feed="live"]').waitFor()
      await shot(page, `filtered-${size}`)
      await page.goto(`${base}/view?layout=compact&static=1`)
      await page.locator('body[data-feed="static"]').waitFor()
      await page.locator('#board-chart svg').waitFor({ state: 'attached' })
      await shot(page, `compact-${size}`)
    }
    t.same(problems, [], `${size}: no page errors`)
  }

  const { page } = await openPage(t, browser, `${base}/view`, SIZES.desktop, 'dark')
  await page.locator('body[data-feed="live"]').waitFor()
  await page.locator('#board-chart svg').waitFor({ state: 'attached' })
  await shot(page, 'feed-board-dark-desktop')

  // a busy board: more than a page, new signals waiting while the reader is scrolled down
  const [planner, scout, builder] = Object.keys(AGENTS) as [string, string, string]
  const say = async (token: string, body: Record<string, unknown>) => {
    const r = await s.publish(body, token)
    if (r.statusCode !== 200) throw new Error(`publish failed: ${r.statusCode}`)
  }
  const jobs = ['api-gateway', 'billing', 'search-index', 'ledger', 'auth']
  for (let i = 0; i < 110; i++)
    await say([planner, scout, builder, builder, scout][i % 5]!, {
      $type: ['broadcast', 'offer', 'request'][i % 3],
      $tags: [jobs[i % 5]!, 'ci'],
      text: `${jobs[i % 5]} build #${1200 + i}: ${['green, 412 tests', 'green, cache warm', 'queued behind 2 jobs'][i % 3]}`,
    })
  const busy = await openPage(t, browser, `${base}/view`, SIZES.desktop)
  await busy.page.locator('body[data-feed="live"]').waitFor()
  await busy.page.locator('#board-chart svg').waitFor({ state: 'attached' })
  await busy.page.evaluate('scrollTo(0, 900)')
  for (let i = 0; i < 3; i++) await say(scout, { $type: 'broadcast', $tags: ['ci'], text: `late build ${i}` })
  await busy.page.locator('#feed-new', { hasText: '3 new signals' }).waitFor()
  await shot(busy.page, 'busy-new-desktop')
  await busy.page.locator('#feed-new').click()
  await busy.page.locator('#feed-new').waitFor({ state: 'hidden' })
  await busy.page.evaluate('scrollTo(0, document.body.scrollHeight)')
  await busy.page.locator('#feed-older:not([hidden])').waitFor()
  await shot(busy.page, 'busy-older-desktop')
  t.same(busy.problems, [], 'busy: no page errors')
})
