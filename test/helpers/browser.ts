import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import type { Test } from 'tap'
import { chromium, type Browser, type Page } from 'playwright-core'
import { projectPath } from '../../libs/shared/paths.js'
import type { Stack } from './stack.js'

/** Debian's chromium (apt-get install chromium); CHROMIUM_PATH points elsewhere. Never a downloaded browser. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'

/**
 * The viewer runs the client library's compiled ESM (client/dist, which `npm run build` writes).
 * Builds it when missing, so a viewer test file also runs on its own; call before starting the stack.
 */
export function buildClientIfMissing(): void {
  if (existsSync(projectPath('client/dist/client/src/index.js'))) return
  execFileSync(process.execPath, [projectPath('node_modules/typescript/bin/tsc'), '-p', projectPath('client/tsconfig.json')], {
    stdio: 'inherit',
  })
}

/** A headless Chromium for this test file, closed with it. Fails (never skips) when the browser is missing. */
export async function launchBrowser(t: Test): Promise<Browser> {
  if (!existsSync(CHROMIUM))
    throw new Error(`no browser at ${CHROMIUM}: the viewer tests need Chromium (apt-get install -y chromium, or set CHROMIUM_PATH)`)
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] })
  t.teardown(() => browser.close())
  return browser
}

/** The stack's board on a real port (the browser needs one), closed by the stack's own teardown. */
export async function listen(s: Stack): Promise<string> {
  await s.app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = s.app.server.address() as { port: number }
  return `http://127.0.0.1:${port}`
}

/** A page on `url`, with every script error and CSP violation it reports collected in `problems`. */
export async function openPage(
  t: Test,
  browser: Browser,
  url: string,
  viewport = { width: 1280, height: 900 },
  colorScheme: 'light' | 'dark' = 'light',
): Promise<{ page: Page; problems: string[] }> {
  const context = await browser.newContext({ viewport, colorScheme })
  t.teardown(() => context.close())
  const page = await context.newPage()
  const problems: string[] = []
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`))
  page.on('console', (m) => m.type() === 'error' && !/Failed to load resource/.test(m.text()) && problems.push(`console: ${m.text()}`))
  await page.goto(url)
  return { page, problems }
}
