import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { projectPath } from '../paths.js'

/**
 * A pristine embedded database: what PGlite's initdb makes, dumped once (`npm run embedded:template`)
 * and loaded by a first start instead of running initdb. initdb in PGlite runs PostgreSQL in a
 * second instance of the database beside the first, and a first start that ran it peaked at
 * 478-549 MiB; loading this file peaks near 240 MiB and takes a third of the time. The file
 * belongs to one PGlite version (its catalog): with any other, a first start runs initdb as before.
 */
export const TEMPLATE_FILE = projectPath('libs/shared/db/pglite-template.tgz')
const STAMP_FILE = projectPath('libs/shared/db/pglite-template.json')

/** The installed PGlite's version (its package.json, found beside the module node resolves). */
export function pgliteVersion(): string {
  let dir = dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite'))
  while (!existsSync(join(dir, 'package.json'))) dir = dirname(dir)
  return (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version: string }).version
}

/** The template's stamp: the PGlite version that made it, or null when there is no template. */
export function templateStamp(): { pglite: string } | null {
  if (!existsSync(TEMPLATE_FILE) || !existsSync(STAMP_FILE)) return null
  return JSON.parse(readFileSync(STAMP_FILE, 'utf8')) as { pglite: string }
}

/** There is a template, made by the installed PGlite. */
export function templateUsable(): boolean {
  return templateStamp()?.pglite === pgliteVersion()
}

/** The template as PGlite's `loadDataDir` takes it, when there is one made by the installed PGlite. */
export function usableTemplate(): Blob | undefined {
  return templateUsable() ? new Blob([readFileSync(TEMPLATE_FILE)]) : undefined
}

/** Makes the template with `create` (a PGlite that ran initdb in a scratch directory) and stamps it. */
export async function writeTemplate(created: { dumpDataDir(c: 'gzip'): Promise<Blob | File> }): Promise<number> {
  const bytes = Buffer.from(await (await created.dumpDataDir('gzip')).arrayBuffer())
  writeFileSync(TEMPLATE_FILE, bytes)
  writeFileSync(STAMP_FILE, `${JSON.stringify({ pglite: pgliteVersion() })}\n`)
  return bytes.length
}
