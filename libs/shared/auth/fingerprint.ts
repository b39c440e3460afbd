import { createHash, createHmac, randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

/** Local mode identity id: `fp_` + the first 20 hex digits of HMAC-SHA256(key, token). */
export const fingerprint = (key: string, token: string) => `fp_${createHmac('sha256', key).update(token).digest('hex').slice(0, 20)}`

/**
 * The fingerprint key (docs/protocol.md "Identity"): FINGERPRINT_SECRET if set; else the key the
 * board stores (`board.fingerprint_key`: a moved or restored board keeps its old key); else, on
 * PostgreSQL, hex SHA-256 of `wire-fp:` + DATABASE_URL; on the embedded database, a random key made
 * once and kept beside the data.
 */
export function fingerprintKey(opts: {
  secret?: string | undefined
  stored?: string | null
  databaseUrl?: string
  dataDir?: string
}): string {
  if (opts.secret) return opts.secret
  if (opts.stored) return opts.stored
  if (opts.databaseUrl) return createHash('sha256').update(`wire-fp:${opts.databaseUrl}`).digest('hex')
  if (!opts.dataDir) throw new Error('fingerprintKey needs a secret, a database URL or a data directory')
  if (opts.dataDir.startsWith('memory://')) return randomBytes(32).toString('hex')
  const file = join(opts.dataDir, 'fingerprint.key')
  if (existsSync(file)) return readFileSync(file, 'utf8').trim()
  mkdirSync(opts.dataDir, { recursive: true })
  const key = randomBytes(32).toString('hex')
  writeFileSync(file, `${key}\n`, { mode: 0o600, flag: 'wx' })
  return key
}
