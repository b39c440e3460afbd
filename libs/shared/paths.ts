import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

let root: string | undefined

/** The repository root (the folder holding package.json), found from this file, so source and dist/ both work. */
export function projectPath(...parts: string[]): string {
  if (!root) {
    let dir = dirname(fileURLToPath(import.meta.url))
    while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir)
    root = dir
  }
  return join(root, ...parts)
}

/** Run from a clone of the repository (its tsconfig.json is there), not from the installed @wire-board/server package. */
export function inCheckout(): boolean {
  return existsSync(projectPath('tsconfig.json'))
}
