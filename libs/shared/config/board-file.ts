import { existsSync, readFileSync } from 'node:fs'
import { z } from 'zod'
import { ConfigError } from './errors.js'

const Id = z.string().trim().min(1).max(256)
const BoardFile = z
  .object({
    name: z.string().trim().min(1).max(128).optional(),
    description: z.string().max(2048).optional(),
    allow: z.array(Id).optional(),
    block: z.array(Id).optional(),
    allowedSignalTypes: z.array(z.string().trim().min(1).max(128)).optional(),
  })
  .strict()
export type BoardFile = z.infer<typeof BoardFile>

/** The board file (WIRE_CONFIG). Missing → null (the board is named "main"); unreadable or invalid → ConfigError. */
export function loadBoardFile(path: string): BoardFile | null {
  if (!existsSync(path)) return null
  let raw: unknown
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'))
  } catch (err) {
    throw new ConfigError(`WIRE_CONFIG ${path}: not readable JSON (${(err as Error).message})`)
  }
  const r = BoardFile.safeParse(raw)
  if (!r.success)
    throw new ConfigError(`WIRE_CONFIG ${path}:\n${r.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`).join('\n')}`)
  return r.data
}
