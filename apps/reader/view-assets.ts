import { createHash } from 'node:crypto'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { extname, join, relative, sep } from 'node:path'
import { projectPath } from '../../libs/shared/paths.js'

/** The page's files, by the name they are served under (/view/<name>). Nothing outside this list is served. */
export const PAGE_FILES = [
  'index.html',
  'style.css',
  'icon.svg',
  'main.js',
  'wire.js',
  'dom.js',
  'time.js',
  'url-state.js',
  'feed.js',
  'signal-card.js',
  'filters.js',
  'thread.js',
  'board-panel.js',
  'chart.js',
  'operator.js',
  'older.js',
  'parents.js',
  'origins.js',
  'waiting.js',
] as const

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
}

export interface Asset {
  body: Buffer
  type: string
  etag: string
}

/** The client library's compiled modules keep their layout under /view/client/ (their relative imports resolve there). */
export const CLIENT_ENTRY = 'client/client/src/index.js'
const CLIENT_NAME = /^[a-z0-9][a-z0-9-]{0,63}(\.js)?$/
const MAX_CLIENT_FILES = 64
const MAX_DEPTH = 6

/** The .js files under `dir` with plain names, as paths relative to it; bounded in depth and count. */
function modulesUnder(dir: string, depth = 0, out: string[] = [], root = dir): string[] {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (out.length >= MAX_CLIENT_FILES || !CLIENT_NAME.test(e.name)) continue
    const path = join(dir, e.name)
    if (e.isDirectory() && depth < MAX_DEPTH) modulesUnder(path, depth + 1, out, root)
    else if (e.isFile() && e.name.endsWith('.js')) out.push(relative(root, path).split(sep).join('/'))
  }
  return out
}

/** The first folder that exists: the source tree in a checkout, the build output's copy in the image. */
function firstDir(candidates: string[]): string | null {
  return candidates.find((d) => existsSync(d)) ?? null
}

const asset = (body: Buffer, name: string): Asset => ({
  body,
  type: TYPES[extname(name)] ?? 'application/octet-stream',
  etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`,
})

/**
 * Every file the viewer serves, read once into memory: the page (apps/reader/view) and the client
 * library's compiled ESM (client/dist). A fixed map, so a request can only name a listed file.
 */
export function loadViewAssets(): { files: Map<string, Asset>; missing: string[] } {
  const files = new Map<string, Asset>()
  const missing: string[] = []
  const pageDir = firstDir([projectPath('apps/reader/view'), projectPath('dist/apps/reader/view')])
  for (const name of PAGE_FILES) {
    const path = pageDir && join(pageDir, name)
    if (path && existsSync(path)) files.set(name, asset(readFileSync(path), name))
    else missing.push(name)
  }
  const clientDir = firstDir([projectPath('client/dist'), projectPath('dist/apps/reader/view-client')])
  for (const name of clientDir ? modulesUnder(clientDir) : [])
    files.set(`client/${name}`, asset(readFileSync(join(clientDir!, name)), name))
  if (!files.has(CLIENT_ENTRY)) missing.push(CLIENT_ENTRY)
  return { files, missing }
}
