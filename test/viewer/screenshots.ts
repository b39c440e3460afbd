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
  const s = await startStack(t, { env: { IDENTITY_URL: fake.url }, seed: seedHistory })
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
})
