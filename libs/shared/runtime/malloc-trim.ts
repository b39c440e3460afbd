import { createRequire } from 'node:module'
import { projectPath } from '../paths.js'

/**
 * glibc's malloc_trim(0): gives back to the system every whole free page inside malloc's heaps, not
 * only at their top (what free() does on its own). After a burst, the Buffers, socket reads and
 * driver buffers it freed sit between blocks still alive, so a quiet process kept 40-70 MB of free
 * malloc memory resident for good (bench/results/rss-after-load.md). The idle collection
 * (idle-gc.ts) calls it after V8's. Null when the addon is not built (no C compiler at build time,
 * or the installed package) or not loadable here: then nothing is trimmed.
 * Returns 1 when memory was released, 0 when none was, -1 on a libc without it.
 */
export const mallocTrim: (() => number) | null = (() => {
  try {
    const addon = createRequire(import.meta.url)(projectPath('dist', 'native', 'malloc-trim.node')) as { trim?: () => number }
    return typeof addon.trim === 'function' ? addon.trim : null
  } catch {
    return null
  }
})()
